#pragma once
// What a process that is about to run candidate code gives up, for good, before it loads any.
// confine_candidate() is called by the process itself (it cannot be undone, and is inherited by
// every thread it starts later):
//   - no_new_privs: nothing it executes can gain privileges;
//   - every capability dropped (effective, permitted, inheritable, ambient and the bounding set
//     as far as the process may drop it), so a process started as root is no more than any user
//     (it cannot ptrace, read /proc/PID/mem of, or signal processes that are not its own);
//   - a seccomp filter (libseccomp; other syscall ABIs, e.g. int 0x80, kill the process) under
//     which these fail with the errno given, everything else is allowed:
//       fork, vfork, clone without CLONE_THREAD (threads still work)   EPERM
//       clone3                                                           ENOSYS (libc falls back
//                                                                          to clone for threads)
//       execve, execveat                                                  EPERM
//       ptrace, process_vm_readv/writev, kcmp, pidfd_open/getfd/send_signal   EPERM
//       kill, tgkill, rt_sigqueueinfo, rt_tgsigqueueinfo aimed at a process other than itself,
//         and tkill                                                       EPERM
//       prlimit64 on another process                                      EPERM
//       socket (any family: no network, no local daemons)                 EACCES
//       io_uring_*, bpf, perf_event_open, userfaultfd, keyctl, add_key, request_key, mount,
//         umount2, unshare, setns, chroot, pivot_root, name_to_handle_at, open_by_handle_at,
//         init/finit/delete_module, kexec_load, reboot, swapon, swapoff, acct, settimeofday,
//         clock_settime, clock_adjtime, adjtimex                          EPERM
// A candidate can still use its own memory, threads, files its sandbox shows it (eval/sandbox.h
// decides which) and signals to itself. Returns an error naming the step the kernel refused; the
// caller must then not run the candidate.
#include "base/status.h"

namespace arc::eval {

Status confine_candidate();

}  // namespace arc::eval
