"""Which module of :mod:`kgforge.cli` defines each top-level command, and the line `kgforge --help` lists for it.

`kgforge --help`, `--version` and shell completion read this instead of importing every command module
(which would load every stage: seconds instead of a tenth of one); `kgforge` reads what Ctrl-C and a full
disk leave from it too (each command's ``@when_interrupted``). Written by scripts/command_index.py
(tests check that it matches the modules): run it after adding a command or changing the first
paragraph of a command's docstring.
"""

from __future__ import annotations

COMMANDS: dict[str, tuple[str, str]] = {'build': ('build', "Import the domain's sources and swap in a freshly built store."),
 'check': ('build', 'Compare the store with its manifest (per-graph counts, quads checksums); report leftovers.'),
 'sources': ('build', 'List the source kinds `--source KIND:PATH` accepts.'),
 'crawl': ('crawl',
           'Crawl SITE politely (robots.txt, per-host delay, retries); pages are cached, so --resume after a\n'
           'kill fetches nothing twice and `kgforge build DOMAIN --source crawl:SITE` re-parses offline.'),
 'crawl-sites': ('crawl', 'List the site specs `kgforge crawl` knows.'),
 'demo': ('demo', 'Run every stage on the bundled offline demo domain (no network, no data needed).'),
 'derive': ('derive',
            'Associated two-hop triples (entities sharing a predicate and object) into their own named graph.'),
 'diff': ('diff', 'List the facts added, removed and changed per graph between two builds of a domain.'),
 'domains': ('domains',
             'List the domains built in the workdir: quads, size on disk, published build, derived graphs, '
             'embeddings.'),
 'embed': ('embed',
           "Train a KG embedding on the domain's store and write a model bundle (weights, tables, index, metrics)."),
 'related': ('embed', "Entities most similar to ENTITY in the trained model's own geometry (itself excluded)."),
 'eval': ('evaluation',
          'Score responses: official DuConv F1/BLEU/DISTINCT, BLEU-3/4, ROUGE-L, CIDEr-D, METEOR, embedding '
          'metrics,\n'
          'BERTScore, BLEURT, knowledge P/R/F1, hallucinations; many systems (--system), goal metrics, Hits@k.'),
 'metrics': ('evaluation', 'The metrics `kgforge eval` computes (the registry: built-in and registered ones).'),
 'export': ('export',
            'One checked subgraph per goal or dialogue, with stable ids, an export manifest and a coverage report.'),
 'export-formats': ('export',
                    'The export formats, their layouts, and which ones take new goals (no conversation needed).'),
 'goals': ('goals', 'Sample reproducible, stratified conversation goals (or --validate real DuConv goals).'),
 'ground': ('ground',
            'Which fact each message states, and its claims checked against the graph; scored against gold attrs\n'
            '(KdConv), or which knowledge triples each utterance states (DuConv; DuRecDial, scored against gold\n'
            'per-utterance knowledge).'),
 'link': ('importer',
          'Link dataset/crawled entities to their Wikidata/XLORE counterparts (owl:sameAs) by zh/en label and\n'
          'alias with type checks; ambiguous matches are listed in <domain>/links-report.json, never guessed.'),
 'init': ('init',
          'Write a schema for a new domain, inferred from sample data; print what was inferred and what to edit.'),
 'translate': ('languages',
               'Propose labels in --lang for entities, relations, types and short values that lack one (an LLM, '
               'cached),\n'
               'or list them for translators (--list), into a review file; --apply loads the reviewed file as its '
               'own graph.'),
 'align': ('languages',
           "Align the domain's names with those in --lang across sources, with type checks; list the ambiguous and\n"
           'the missing ones (all of them in <domain>/align-LANG.json).'),
 'qa-eval': ('qa', 'Score predictions turn by turn (alias-aware), per turn and per conversation, by configuration.'),
 'query': ('query', "Run a SPARQL query over the union of the domain's graphs; values are bound, never pasted."),
 'queries': ('query',
             'List the shipped queries, by name, with what each returns (`kgforge query DOMAIN NAME` runs one).'),
 'export-rdf': ('query', 'Export the store: N-Quads/TriG keep the named graphs; N-Triples/Turtle give their union.'),
 'serve': ('serve', 'Serve DOMAIN read-only: the SPARQL endpoint at /sparql and the explorer at /.'),
 'stats': ('stats', 'Entities, relations, triples and per-triple sizes (KdConv / DuConv Table 2).'),
 'synth': ('synth',
           'Draft a dialogue per goal (a model, or templates offline), verify every turn against the graph, repair '
           'or drop.'),
 'collect': ('collect',
             'Collect dialogues from pairs of crowd workers chatting under goals (serve, tokens, export).'),
 'corpus': ('corpus', 'Dialogue statistics, splits, retrieval candidates and a datasheet.'),
 'import': ('importer', "Add a Wikidata or XLORE source to a domain's store."),
 'qa': ('qa', 'Conversational factoid QA datasets from the graph (ConvKGYarn).'),
 'rate': ('rate', 'Human rating sheets: write them for a rubric, read them back.'),
 'release': ('release',
             'Release dialogues grounded in a domain as a dataset folder (HF card, Croissant, turn table); check '
             'one.'),
 'audit': ('release', "A hand audit of the graph's accuracy: a sample to rate, the ratings read.")}
INTERRUPTED: dict[str, str] = {'audit': 'interrupted: no file was left half-written (each is replaced whole); rerun the same command',
 'build': 'interrupted: the published store is unchanged (the unfinished build was discarded); rerun the same '
          'command',
 'check': 'interrupted: nothing was changed (this command only reads)',
 'collect': 'interrupted: every accepted turn is in DIR/journal.jsonl; run the same command again and every open '
            'session goes on where it was',
 'crawl': 'interrupted: the pages fetched so far are cached; rerun with --resume to continue the crawl',
 'crawl-sites': 'interrupted: nothing was changed (this command only reads)',
 'derive': 'interrupted: the published store is unchanged (the unfinished build was discarded); rerun the same '
           'command',
 'domains': 'interrupted: nothing was changed (this command only reads)',
 'embed': "interrupted before this run's first checkpoint: the model bundle is unchanged; rerun the same command",
 'export': 'interrupted: no file was left half-written (each is replaced whole); rerun the same command',
 'export-formats': 'interrupted: nothing was changed (this command only reads)',
 'export-rdf': 'interrupted: no file was left half-written (each is replaced whole); rerun the same command',
 'goals': 'interrupted: no file was left half-written (each is replaced whole); rerun the same command',
 'import': 'interrupted: the published store is unchanged; rerun the same command to resume the import from its last '
           'checkpoint',
 'link': 'interrupted: the published store is unchanged (the unfinished build was discarded); rerun the same command',
 'query': 'interrupted: nothing was changed (this command only reads)',
 'related': 'interrupted: nothing was changed (this command only reads)',
 'release': 'interrupted: nothing was written where --out points (the release is made beside it and renamed at the '
            'end); rerun the same command',
 'serve': 'interrupted: nothing was changed (this command only reads)',
 'sources': 'interrupted: nothing was changed (this command only reads)',
 'stats': 'interrupted: nothing was changed (this command only reads)',
 'synth': 'interrupted: no file was left half-written (each is replaced whole); every reply so far is cached: rerun '
          'the same command to go on without asking again'}
AFTER_DISK_FULL: dict[str, str] = {'crawl': 'rerun it with --resume (the pages fetched so far are cached)',
 'import': 'rerun the same command: the import resumes from its last checkpoint'}
