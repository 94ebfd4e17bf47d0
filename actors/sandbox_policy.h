#pragma once
// Who may write code that runs without a sandbox. Builtin agents only choose knobs of the
// problem's own families; an external agent (a backend with an exchange format: llm, exec)
// writes free source, which is hostile until proven otherwise. Such a campaign runs only where
// its candidates are confined (eval/sandbox.h): the sandbox is enabled, or the user turned it
// off explicitly (--sandbox off). `--sandbox on` without a working sandbox runs nothing.
#include "actors/campaign_config.h"
#include "base/status.h"
#include "eval/sandbox.h"

namespace arc::actors {

// Ok, or invalid_argument naming the campaign file, the first external agent, why the sandbox
// is unavailable and the flag that opts out.
Status check_sandbox_policy(const CampaignConfig& config, const eval::Sandbox& sandbox);

}  // namespace arc::actors
