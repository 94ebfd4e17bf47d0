#include "actors/sandbox_policy.h"

#include "actors/agent_backend_registry.h"

namespace arc::actors {

Status check_sandbox_policy(const CampaignConfig& config, const eval::Sandbox& sandbox) {
  if (sandbox.enabled() || sandbox.mode() == eval::SandboxMode::kOff) return Status::ok();
  if (sandbox.mode() == eval::SandboxMode::kOn) {
    return Status::invalid_argument("--sandbox on: the sandbox is unavailable: " +
                                    sandbox.reason());
  }
  for (const AgentConfig& a : config.agents) {
    const AgentBackendKind* kind = find_agent_backend(a.backend);
    if (kind == nullptr || kind->format == nullptr) continue;
    return Status::invalid_argument(
        config.file.string() + ": agent " + a.name + " (backend \"" + a.backend +
        "\") writes untrusted code, and the sandbox is unavailable: " + sandbox.reason() +
        ". Install bubblewrap where the kernel allows it, or pass --sandbox off to run its "
        "candidates unconfined");
  }
  return Status::ok();
}

}  // namespace arc::actors
