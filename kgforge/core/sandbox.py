"""Limits a worker process puts on itself before it runs anyone's query: no network, bounded memory.

Oxigraph answers a ``SERVICE <http://…>`` clause by sending the query to that endpoint, and pyoxigraph
offers no switch to stop it. A check of the query text can be fooled (escapes, comments, case: SPARQL's
lexer and any other parser disagree somewhere), so the check that counts is below Oxigraph: the worker
process itself cannot open a network socket.

- **seccomp** (Linux x86_64 and aarch64): a filter on the process (all its threads, and everything it
  starts) makes ``socket()`` fail with EACCES for every address family but ``AF_UNIX``, refuses
  ``io_uring_setup`` (io_uring can open sockets without the ``socket`` system call) and every system call
  made through another architecture's entry (the 32-bit ``socketcall`` cannot be inspected). The worker's
  pipes were open before, so they keep working; no socket can be made to reach a host, loopback included.
- **network namespace**: where seccomp cannot be installed, the process moves into a new user and network
  namespace, whose only interface is a loopback that is down.

:func:`close_network` reports which one holds (verified by trying to open a TCP socket), or ``None``.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import errno
import os
import platform
import resource
import socket

_PR_SET_NO_NEW_PRIVS = 38
_PR_SET_SECCOMP = 22
_SECCOMP_MODE_FILTER = 2
_SECCOMP_SET_MODE_FILTER = 1
_SECCOMP_FILTER_FLAG_TSYNC = 1
_SECCOMP_RET_ALLOW = 0x7FFF0000
_SECCOMP_RET_ERRNO = 0x00050000
_CLONE_NEWUSER = 0x10000000
_CLONE_NEWNET = 0x40000000
_X32_SYSCALL_BIT = 0x40000000

# (audit arch, seccomp, socket, io_uring_setup) system call numbers per machine
_ARCHES = {
    "x86_64": (0xC000003E, 317, 41, 425),
    "aarch64": (0xC00000B7, 277, 198, 425),
}
_ARCHES["amd64"] = _ARCHES["x86_64"]
_ARCHES["arm64"] = _ARCHES["aarch64"]

# classic BPF opcodes
_LD_W_ABS = 0x20
_JEQ_K = 0x15
_JGE_K = 0x35
_RET_K = 0x06
# offsets in struct seccomp_data: int nr; __u32 arch; __u64 instruction_pointer; __u64 args[6]
_NR, _ARCH, _ARG0 = 0, 4, 16


class _SockFilter(ctypes.Structure):
    _fields_ = [("code", ctypes.c_ushort), ("jt", ctypes.c_ubyte), ("jf", ctypes.c_ubyte), ("k", ctypes.c_uint32)]


class _SockFprog(ctypes.Structure):
    _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.POINTER(_SockFilter))]


def network_filter(machine: str) -> list[tuple[int, int, int, int]]:
    """The seccomp program (``(code, jt, jf, k)`` instructions) for ``machine``; KeyError for an unknown one."""
    arch, _, sys_socket, sys_io_uring_setup = _ARCHES[machine]
    refuse_eacces = _SECCOMP_RET_ERRNO | errno.EACCES
    refuse_eperm = _SECCOMP_RET_ERRNO | errno.EPERM
    program = [
        (_LD_W_ABS, 0, 0, _ARCH),
        (_JEQ_K, 1, 0, arch),  # this machine's own entry: go on
        (_RET_K, 0, 0, refuse_eperm),  # any other ABI (i386 socketcall, …)
        (_LD_W_ABS, 0, 0, _NR),
    ]
    if machine in ("x86_64", "amd64"):
        program += [
            (_JGE_K, 0, 1, _X32_SYSCALL_BIT),  # the x32 ABI shares the arch value
            (_RET_K, 0, 0, refuse_eperm),
        ]
    program += [
        (_JEQ_K, 0, 1, sys_io_uring_setup),
        (_RET_K, 0, 0, refuse_eperm),
        (_JEQ_K, 1, 0, sys_socket),
        (_RET_K, 0, 0, _SECCOMP_RET_ALLOW),
        (_LD_W_ABS, 0, 0, _ARG0),  # socket(domain, …): the kernel reads domain as an int
        (_JEQ_K, 0, 1, socket.AF_UNIX),
        (_RET_K, 0, 0, _SECCOMP_RET_ALLOW),
        (_RET_K, 0, 0, refuse_eacces),
    ]
    return program


def close_network() -> str | None:
    """Make this process (and its threads and children, present and future) unable to open a network
    connection: ``"seccomp"`` or ``"namespace"`` says how, ``None`` that neither could be installed."""
    for name, install in (("seccomp", _install_seccomp), ("namespace", _enter_network_namespace)):
        try:
            install()
        except (OSError, KeyError, AttributeError):
            continue
        if not network_reachable():
            return name
    return None


def network_reachable() -> bool:
    """Whether this process can still make a TCP/IP socket and reach loopback with it."""
    try:
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    except OSError:
        return False
    with sock:
        sock.settimeout(1)
        try:
            sock.connect(("127.0.0.1", 9))
        except ConnectionRefusedError:
            return True  # a port that answers "refused" is a host that was reached
        except OSError:
            return False
    return True


def _libc() -> ctypes.CDLL:
    return ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True)


def _check(result: int) -> None:
    if result != 0:
        code = ctypes.get_errno()
        raise OSError(code, os.strerror(code))


def _install_seccomp() -> None:
    machine = platform.machine().lower()
    instructions = network_filter(machine)
    array = (_SockFilter * len(instructions))(*(_SockFilter(*ins) for ins in instructions))
    program = _SockFprog(len(instructions), array)
    libc = _libc()
    _check(libc.prctl(_PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0))  # lets an unprivileged process install a filter
    sys_seccomp = _ARCHES[machine][1]
    if libc.syscall(sys_seccomp, _SECCOMP_SET_MODE_FILTER, _SECCOMP_FILTER_FLAG_TSYNC, ctypes.byref(program)) != 0:
        # an old kernel without seccomp(2): the prctl form covers this thread only, so it must run
        # before the worker starts any thread (it does: this is the first thing a worker does)
        _check(libc.prctl(_PR_SET_SECCOMP, _SECCOMP_MODE_FILTER, ctypes.byref(program), 0, 0))


def _enter_network_namespace() -> None:
    libc = _libc()
    if libc.unshare(_CLONE_NEWNET) != 0:  # as root
        _check(libc.unshare(_CLONE_NEWUSER | _CLONE_NEWNET))  # unprivileged, where user namespaces are on


def limit_memory(limit_bytes: int) -> None:
    """Cap this process's data (heap, anonymous mappings, thread stacks; not the store's mapped files)
    at ``limit_bytes``: past it an allocation fails, and the process ends instead of the machine swapping."""
    soft, hard = resource.getrlimit(resource.RLIMIT_DATA)
    new = limit_bytes if hard == resource.RLIM_INFINITY else min(limit_bytes, hard)
    resource.setrlimit(resource.RLIMIT_DATA, (new, hard))
