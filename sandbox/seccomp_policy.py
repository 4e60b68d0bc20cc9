"""The system calls no sandboxed process may make, and Docker's form of that filter.

Each of them opens kernel code that a contest program never needs and that has
had privilege-escalation bugs (namespaces, mounts, keyrings, BPF, perf, io_uring,
userfaultfd), or reaches another process (ptrace, process_vm_*).  A denied call
fails with EPERM, which the program may handle; nothing is killed.

Docker applies the filter itself (libseccomp inside runc) from a JSON profile
given in `security_opt`; names the kernel or libseccomp does not know are skipped
by runc, so one list serves old and new kernels.
"""

from __future__ import annotations

import errno
import json
import platform
from typing import Any

DENIED = (
    # namespaces: creating or entering them
    "unshare", "setns",
    # mounts, old and new API
    "mount", "umount", "umount2", "pivot_root", "chroot", "fsopen", "fsconfig", "fsmount", "fspick",
    "move_mount", "open_tree", "mount_setattr",
    # kernel keyrings (they outlive processes: state across tests)
    "add_key", "keyctl", "request_key",
    "bpf", "perf_event_open", "userfaultfd",
    "io_uring_setup", "io_uring_enter", "io_uring_register",
    # other processes
    "ptrace", "process_vm_readv", "process_vm_writev", "pidfd_getfd", "kcmp",
    # kernel modules and kexec
    "init_module", "finit_module", "delete_module", "kexec_load", "kexec_file_load",
    # file handles bypass path permissions ("shocker")
    "open_by_handle_at", "name_to_handle_at",
)

CLONE_NEWNS = 0x00020000
# clone() flags that create a namespace; any one of them is denied
CLONE_NAMESPACE_FLAGS = (
    CLONE_NEWNS,
    0x02000000,  # CLONE_NEWCGROUP
    0x04000000,  # CLONE_NEWUTS
    0x08000000,  # CLONE_NEWIPC
    0x10000000,  # CLONE_NEWUSER
    0x20000000,  # CLONE_NEWPID
    0x40000000,  # CLONE_NEWNET
)

_ARCHES = {
    "x86_64": ["SCMP_ARCH_X86_64", "SCMP_ARCH_X86", "SCMP_ARCH_X32"],
    "aarch64": ["SCMP_ARCH_AARCH64", "SCMP_ARCH_ARM"],
}


def docker_profile() -> dict[str, Any]:
    """The deny list as a Docker seccomp profile (everything else allowed)."""
    deny = {"action": "SCMP_ACT_ERRNO", "errnoRet": errno.EPERM}
    rules: list[dict[str, Any]] = [{"names": list(DENIED), **deny}]
    # several rules for one call are or-ed: clone is denied when any namespace flag is set
    for flag in CLONE_NAMESPACE_FLAGS:
        rules.append({"names": ["clone"], **deny,
                      "args": [{"index": 0, "value": flag, "valueTwo": flag, "op": "SCMP_CMP_MASKED_EQ"}]})
    # clone3 passes its flags in memory a filter cannot read: ENOSYS makes the C
    # library fall back to clone, whose flags are checked above
    rules.append({"names": ["clone3"], "action": "SCMP_ACT_ERRNO", "errnoRet": errno.ENOSYS})
    profile: dict[str, Any] = {"defaultAction": "SCMP_ACT_ALLOW", "syscalls": rules}
    arches = _ARCHES.get(platform.machine())
    if arches:
        profile["architectures"] = arches
    return profile


def docker_security_opt() -> str:
    return "seccomp=" + json.dumps(docker_profile(), separators=(",", ":"))
