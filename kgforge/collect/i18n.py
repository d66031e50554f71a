"""The collection site's words in Chinese and English, and which of the two a request gets: ``?lang=zh|en``,
else the first of them in the browser's ``Accept-Language`` (by its q-values), else Chinese (the datasets'
workers write Chinese)."""

from __future__ import annotations

LANGUAGES = ("zh", "en")

STRINGS: dict[str, dict[str, str]] = {
    "zh": {
        "title": "对话采集",
        "no_token": "请打开请求方发给你的链接。",
        "bad_token": "这个链接无效，请向请求方确认。",
        "waiting": "正在等待另一位参与者加入……",
        "done": "所有目标都已采集完毕，谢谢参与！",
        "your_role": "你的角色",
        "goal": "对话目标",
        "topics": "话题",
        "knowledge": "知识（点击你这一轮用到的知识）",
        "profile": "用户画像",
        "situation": "情境",
        "step": "当前目标",
        "your_turn": "轮到你发言了",
        "their_turn": "等待对方发言……",
        "placeholder": "输入你要说的话……",
        "send": "发送",
        "finish": "目标已达成，结束对话",
        "turns": "已有 {n} 轮（至少 {min} 轮，最多 {max} 轮）",
        "finished": "对话已结束，谢谢！",
        "again": "开始下一段对话",
        "clicked": "用到的知识",
        "not_stated": "提醒：这句话似乎没有说到所点的知识：{fact}",
        "contradicts_clicked": "提醒：这句话与所点的知识不一致：{fact}",
        "contradicts_knowledge": "提醒：这句话与知识中的信息不一致",
        "checks": "自动检查",
        "goal_reached": "目标达成",
        "passed": "通过",
        "failed": "未通过",
        "error": "出错了：",
        "leader": "引导者",
        "follower": "跟随者",
        "speaker1": "说话人一",
        "speaker2": "说话人二",
        "recommender": "推荐者",
        "seeker": "用户",
        "hint_leader": "你知道对话目标和相关知识：从第一个话题自然地聊到第二个话题，每一轮点击你用到的知识。",
        "hint_follower": "像平常聊天一样回应对方，对方会引导话题。",
        "hint_speaker1": "和对方围绕话题自由聊天，每一轮点击你用到的知识。",
        "hint_speaker2": "和对方围绕话题自由聊天，每一轮点击你用到的知识。",
        "hint_recommender": "按目标序列一步步聊下去，适时推荐；每一轮点击你用到的知识，进入新目标时在上方选择。",
        "hint_seeker": "按你的画像和情境像真实用户一样聊天，可以接受或拒绝推荐。",
        "admin": "采集进度",
        "sessions": "对话",
        "workers": "参与者",
        "export": "导出",
        "progress": "已完成 {finished} / {wanted} 段对话，进行中 {open} 段，等待配对 {waiting} 人",
    },
    "en": {
        "title": "Dialogue collection",
        "no_token": "Open the link the requester gave you.",
        "bad_token": "This link is not valid; ask the requester.",
        "waiting": "Waiting for a partner to join…",
        "done": "Every goal has been collected. Thank you!",
        "your_role": "Your role",
        "goal": "Goal",
        "topics": "Topics",
        "knowledge": "Knowledge (click the facts your turn uses)",
        "profile": "Profile",
        "situation": "Situation",
        "step": "Current goal",
        "your_turn": "Your turn",
        "their_turn": "Waiting for your partner…",
        "placeholder": "Type what you say…",
        "send": "Send",
        "finish": "Goal reached: end the session",
        "turns": "{n} turns so far (at least {min}, at most {max})",
        "finished": "The session is finished. Thank you!",
        "again": "Start another session",
        "clicked": "Facts used",
        "not_stated": "Note: the text does not seem to state the clicked fact: {fact}",
        "contradicts_clicked": "Note: the text contradicts the clicked fact: {fact}",
        "contradicts_knowledge": "Note: the text contradicts the knowledge",
        "checks": "Automatic checks",
        "goal_reached": "goal reached",
        "passed": "passed",
        "failed": "not passed",
        "error": "Error: ",
        "leader": "Leader",
        "follower": "Follower",
        "speaker1": "Speaker 1",
        "speaker2": "Speaker 2",
        "recommender": "Recommender",
        "seeker": "Seeker",
        "hint_leader": "You know the goal and the knowledge: steer the chat from the first topic to the second, "
        "clicking the facts each of your turns uses.",
        "hint_follower": "Chat as you normally would; your partner leads the conversation.",
        "hint_speaker1": "Chat freely about the topic, clicking the facts each of your turns uses.",
        "hint_speaker2": "Chat freely about the topic, clicking the facts each of your turns uses.",
        "hint_recommender": "Follow the goal sequence step by step and recommend when it says so; click the facts "
        "each turn uses, and choose the goal step above when you move on.",
        "hint_seeker": "Chat as the user of your profile and situation would; accept or turn down recommendations.",
        "admin": "Collection progress",
        "sessions": "Sessions",
        "workers": "Workers",
        "export": "Export",
        "progress": "{finished} of {wanted} sessions finished, {open} under way, {waiting} waiting for a partner",
    },
}


def page_language(asked: str | None, accept_language: str) -> str:
    """``asked`` when it is zh or en, else the browser's first choice of the two, else zh."""
    if asked and asked.lower() in LANGUAGES:
        return asked.lower()
    ranked = []
    for position, item in enumerate(accept_language.split(",")):
        tag, _, params = item.strip().partition(";")
        quality = 1.0
        if params.strip().startswith("q="):
            try:
                quality = float(params.strip()[2:])
            except ValueError:
                quality = 0.0
        primary = tag.strip().lower().split("-")[0]
        if primary in LANGUAGES and quality > 0:
            ranked.append((-quality, position, primary))
    return min(ranked)[2] if ranked else "zh"
