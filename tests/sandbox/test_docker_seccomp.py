"""The Docker seccomp profile denies every call the issue names, with EPERM, and allows the rest."""

from __future__ import annotations

import errno
import json

from sandbox import seccomp_policy

REQUIRED = {"unshare", "setns", "mount", "umount2", "pivot_root", "add_key", "keyctl", "request_key", "bpf",
            "perf_event_open", "userfaultfd", "io_uring_setup", "io_uring_enter", "io_uring_register", "ptrace",
            "process_vm_readv", "process_vm_writev", "init_module", "finit_module", "delete_module", "kexec_load",
            "kexec_file_load"}


def test_profile_denies_the_kernel_surface_with_eperm() -> None:
    profile = json.loads(seccomp_policy.docker_security_opt().removeprefix("seccomp="))
    assert profile["defaultAction"] == "SCMP_ACT_ALLOW"
    plain = {name for rule in profile["syscalls"] if "args" not in rule for name in rule["names"]
             if rule["action"] == "SCMP_ACT_ERRNO" and rule["errnoRet"] == errno.EPERM}
    assert REQUIRED <= plain
    # clone is denied for each namespace flag alone, allowed otherwise (threads, fork)
    clone = [rule["args"][0] for rule in profile["syscalls"] if rule["names"] == ["clone"]]
    masks = {arg["value"] for arg in clone if arg["op"] == "SCMP_CMP_MASKED_EQ" and arg["value"] == arg["valueTwo"]}
    assert masks == {0x00020000, 0x02000000, 0x04000000, 0x08000000, 0x10000000, 0x20000000, 0x40000000}
    [clone3] = [rule for rule in profile["syscalls"] if rule["names"] == ["clone3"]]
    assert clone3["errnoRet"] == errno.ENOSYS  # the C library then falls back to clone
