#include "eval/candidate_confinement.h"

#include <cerrno>
#include <cstring>
#include <string>

#include <linux/capability.h>
#include <sched.h>
#include <seccomp.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

namespace arc::eval {
namespace {

Status refused(const std::string& step, int err) {
  return Status::unavailable("cannot confine the candidate process: " + step + ": " +
                             std::strerror(err));
}

Status drop_capabilities() {
  // The bounding set first (needs CAP_SETPCAP, which is about to go); EINVAL past the last cap.
  for (int cap = 0; cap < 64; ++cap) {
    if (::prctl(PR_CAPBSET_READ, cap, 0, 0, 0) < 0) break;
    (void)::prctl(PR_CAPBSET_DROP, cap, 0, 0, 0);  // EPERM without CAP_SETPCAP: nothing to drop
  }
  (void)::prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0);
  __user_cap_header_struct header{};
  header.version = _LINUX_CAPABILITY_VERSION_3;
  header.pid = 0;
  __user_cap_data_struct data[2]{};
  if (::syscall(SYS_capset, &header, data) != 0) return refused("capset", errno);
  return Status::ok();
}

// The seccomp context, released on every path.
class Filter {
 public:
  Filter() : ctx_(::seccomp_init(SCMP_ACT_ALLOW)) {}
  ~Filter() {
    if (ctx_ != nullptr) ::seccomp_release(ctx_);
  }
  Filter(const Filter&) = delete;
  Filter& operator=(const Filter&) = delete;
  bool valid() const { return ctx_ != nullptr; }

  // Fails `name` with `err` (when the conditions hold).
  Status deny(const char* name, int err, unsigned count = 0, scmp_arg_cmp cmp = {}) {
    int nr = ::seccomp_syscall_resolve_name(name);
    if (nr == __NR_SCMP_ERROR) return Status::ok();  // not a syscall on this architecture
    int rc = count == 0 ? ::seccomp_rule_add(ctx_, SCMP_ACT_ERRNO(err), nr, 0)
                        : ::seccomp_rule_add(ctx_, SCMP_ACT_ERRNO(err), nr, 1, cmp);
    if (rc != 0) return refused(std::string("seccomp rule for ") + name, -rc);
    return Status::ok();
  }
  Status load() {
    int rc = ::seccomp_load(ctx_);
    return rc == 0 ? Status::ok() : refused("seccomp_load", -rc);
  }

 private:
  scmp_filter_ctx ctx_;
};

}  // namespace

Status confine_candidate() {
  if (::prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) return refused("no_new_privs", errno);
  if (Status s = drop_capabilities(); !s) return s;
  Filter f;
  if (!f.valid()) return Status::unavailable("cannot confine the candidate process: seccomp_init");
  const auto self = static_cast<scmp_datum_t>(::getpid());
  for (const char* name : {"fork",
                           "vfork",
                           "execve",
                           "execveat",
                           "ptrace",
                           "process_vm_readv",
                           "process_vm_writev",
                           "kcmp",
                           "pidfd_open",
                           "pidfd_getfd",
                           "pidfd_send_signal",
                           "tkill",
                           "io_uring_setup",
                           "io_uring_enter",
                           "io_uring_register",
                           "bpf",
                           "perf_event_open",
                           "userfaultfd",
                           "keyctl",
                           "add_key",
                           "request_key",
                           "mount",
                           "umount2",
                           "unshare",
                           "setns",
                           "chroot",
                           "pivot_root",
                           "name_to_handle_at",
                           "open_by_handle_at",
                           "init_module",
                           "finit_module",
                           "delete_module",
                           "kexec_load",
                           "kexec_file_load",
                           "reboot",
                           "swapon",
                           "swapoff",
                           "acct",
                           "settimeofday",
                           "clock_settime",
                           "clock_adjtime",
                           "adjtimex"}) {
    if (Status s = f.deny(name, EPERM); !s) return s;
  }
  if (Status s = f.deny("clone3", ENOSYS); !s) return s;
  if (Status s = f.deny("socket", EACCES); !s) return s;
  // A new process (no CLONE_THREAD) is refused; threads are not.
  if (Status s = f.deny("clone", EPERM, 1, SCMP_A0(SCMP_CMP_MASKED_EQ, CLONE_THREAD, 0)); !s) {
    return s;
  }
  // Signals and limits only for itself (a pid of 0 or below names a group or everyone).
  for (const char* name : {"kill", "tgkill", "rt_sigqueueinfo", "rt_tgsigqueueinfo"}) {
    if (Status s = f.deny(name, EPERM, 1, SCMP_A0(SCMP_CMP_NE, self)); !s) return s;
  }
  if (Status s = f.deny("prlimit64", EPERM, 1, SCMP_A0(SCMP_CMP_NE, 0)); !s) return s;
  return f.load();
}

}  // namespace arc::eval
