// The llm agent backend (docs/agents.md, "Pointing arcd at a model server"): its [llm] section,
// an agent's own `model`, and its transport. Per exchange it POSTs the prompt (a chat-completions
// request body, actors/llm_exchange.cc) to {base_url}/chat/completions, with "Authorization:
// Bearer KEY" when a key is configured. A 429, a 5xx or a transport error is retried after
// backoff_s, 2 x backoff_s, ... (a Retry-After header of at most 60 s is honoured instead);
// other statuses fail at once. At most `concurrency` requests are in flight over all llm agents
// of a campaign: they share one transport.
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <semaphore>
#include <thread>

#include <httplib.h>

#include "actors/agent_backend_registry.h"
#include "actors/campaign_toml.h"
#include "actors/shells.h"

namespace arc::actors {
namespace {

constexpr const char* kSection = "llm";

// The ranges of [llm]'s numeric fields (docs/campaign-format.md).
constexpr NumberRange kTemperatureRange{0, 2};
constexpr IntegerRange kMaxTokensRange{1, 1 << 20};
constexpr IntegerRange kRetriesRange{0, 20};
constexpr NumberRange kBackoffRange{0, 600, false, false, "seconds"};
constexpr IntegerRange kConcurrencyRange{1, 256};

// [llm]: the OpenAI-compatible chat-completions server llm agents talk to.
struct LlmSection : BackendSettings {
  std::string base_url;                        // e.g. "http://127.0.0.1:8000/v1"; required
  std::string model;                           // required
  std::string api_key_env = "OPENAI_API_KEY";  // environment variable holding the key
  std::string api_key;                         // the key itself (it enters the log); "" = env
  double temperature = 0.2;
  uint32_t max_tokens = 4096;
  double timeout_s = 300;     // per HTTP attempt (connect and read)
  uint32_t retries = 3;       // further attempts after a 429, a 5xx or a transport error
  double backoff_s = 2;       // wait before the first retry; doubles each time
  uint32_t concurrency = 4;   // requests in flight at once, over all llm agents
  uint32_t max_failures = 5;  // consecutive failed exchanges after which an agent stops

  std::string text() const override {
    std::string s = "base_url = " + toml_string(base_url) + "\nmodel = " + toml_string(model) +
                    "\napi_key_env = " + toml_string(api_key_env) + "\n";
    if (!api_key.empty()) s += "api_key = " + toml_string(api_key) + "\n";
    return s + "temperature = " + toml_number(temperature) +
           "\nmax_tokens = " + std::to_string(max_tokens) +
           "\ntimeout_s = " + toml_number(timeout_s) + "\nretries = " + std::to_string(retries) +
           "\nbackoff_s = " + toml_number(backoff_s) +
           "\nconcurrency = " + std::to_string(concurrency) +
           "\nmax_failures = " + std::to_string(max_failures) + "\n";
  }
};

// An llm agent's own fields: the model it asks instead of [llm].model.
struct LlmAgentFields : BackendSettings {
  std::string model;
  std::string text() const override { return "model = " + toml_string(model) + "\n"; }
};

constexpr AgentField kAgentFields[] = {
    {"model", "a non-empty model name, on an agent with backend = \"llm\""},
};

std::shared_ptr<const BackendSettings> read_section(CampaignReader& r, const CampaignTable& t,
                                                    bool /*required*/) {
  r.known_fields(t, {"base_url", "model", "api_key_env", "api_key", "temperature", "max_tokens",
                     "timeout_s", "retries", "backoff_s", "concurrency", "max_failures"});
  auto l = std::make_shared<LlmSection>();
  r.get(t, "base_url", l->base_url, true, "an http:// or https:// URL");
  r.get(t, "model", l->model, true, "a model name");
  r.get(t, "api_key_env", l->api_key_env, false, "an environment variable name");
  r.get(t, "api_key", l->api_key, false, "a string");
  r.number(t, "temperature", l->temperature, kTemperatureRange);
  r.integer(t, "max_tokens", l->max_tokens, kMaxTokensRange);
  r.number(t, "timeout_s", l->timeout_s, kTimeoutRange);
  r.integer(t, "retries", l->retries, kRetriesRange);
  r.number(t, "backoff_s", l->backoff_s, kBackoffRange);
  r.integer(t, "concurrency", l->concurrency, kConcurrencyRange);
  r.integer(t, "max_failures", l->max_failures, kMaxFailuresRange);
  if (r.failed()) return nullptr;
  if (l->base_url.rfind("http://", 0) != 0 && l->base_url.rfind("https://", 0) != 0) {
    r.fail(t.field("base_url"), "an http:// or https:// URL", toml_string(l->base_url));
  } else if (l->model.empty()) {
    r.fail(t.field("model"), "a model name", "\"\"");
  }
  return l;
}

std::shared_ptr<const BackendSettings> read_agent(CampaignReader& r, const CampaignTable& t) {
  if (t.table->get("model") == nullptr) return nullptr;
  auto f = std::make_shared<LlmAgentFields>();
  r.get(t, "model", f->model, true, "a model name");
  if (!r.failed() && f->model.empty()) r.fail(t.field("model"), kAgentFields[0].expected, "\"\"");
  return f;
}

// The campaign's [llm], or its defaults (which no transport accepts) when it has none.
const LlmSection& section_of(const CampaignConfig& c) {
  static const LlmSection kNone;
  const LlmSection* s = c.section<LlmSection>(kSection);
  return s != nullptr ? *s : kNone;
}

void core_spec(const CampaignConfig& c, const AgentConfig& a, AgentSpec& spec) {
  const LlmSection& l = section_of(c);
  const auto* own = dynamic_cast<const LlmAgentFields*>(a.fields.get());
  spec.model = own != nullptr ? own->model : l.model;
  spec.temperature = l.temperature;
  spec.max_tokens = l.max_tokens;
  spec.max_failures = l.max_failures;
}

std::string head(const std::string& s, size_t n) {
  return s.size() <= n ? s : s.substr(0, n) + "...";
}

class LlmBackend : public AgentBackend {
 public:
  LlmBackend(const LlmSection& c, std::string origin, std::string path, std::string key)
      : timeout_s_(c.timeout_s),
        retries_(c.retries),
        backoff_s_(c.backoff_s),
        origin_(std::move(origin)),
        path_(std::move(path)),
        key_(std::move(key)),
        slots_(static_cast<std::ptrdiff_t>(c.concurrency)) {}

  ExchangeReply exchange(const ExchangeRequest& request) override {
    slots_.acquire();
    struct Release {
      std::counting_semaphore<>* s;
      ~Release() { s->release(); }
    } release{&slots_};
    ExchangeReply r;
    const auto t0 = std::chrono::steady_clock::now();
    const time_t secs = static_cast<time_t>(timeout_s_);
    const time_t usecs = static_cast<time_t>((timeout_s_ - static_cast<double>(secs)) * 1e6);
    for (uint32_t attempt = 0; attempt <= retries_; ++attempt) {
      r.attempts = attempt + 1;
      double retry_after = -1;
      bool retryable = false;
      try {
        httplib::Client cli(origin_);
        cli.set_connection_timeout(secs, usecs);
        cli.set_read_timeout(secs, usecs);
        cli.set_write_timeout(secs, usecs);
        httplib::Headers headers;
        if (!key_.empty()) headers.emplace("Authorization", "Bearer " + key_);
        auto res = cli.Post(path_.c_str(), headers, request.prompt, "application/json");
        if (!res) {
          r.error = "POST " + origin_ + path_ + " failed: " + httplib::to_string(res.error());
          retryable = true;
        } else if (res->status >= 200 && res->status < 300) {
          r.delivered = true;
          r.body = res->body;
          r.error.clear();
          break;
        } else {
          r.error = "POST " + origin_ + path_ + ": HTTP " + std::to_string(res->status) + ": " +
                    head(res->body, 300);
          retryable = res->status == 429 || res->status >= 500;
          if (res->has_header("Retry-After")) {
            char* end = nullptr;
            const std::string v = res->get_header_value("Retry-After");
            double s = std::strtod(v.c_str(), &end);
            if (end != v.c_str() && s >= 0 && s <= 60) retry_after = s;
          }
        }
      } catch (const std::exception& e) {
        r.error = std::string("POST failed: ") + e.what();
        retryable = true;
      }
      if (!retryable || attempt == retries_) break;
      const double wait =
          retry_after >= 0 ? retry_after : backoff_s_ * std::ldexp(1.0, static_cast<int>(attempt));
      std::this_thread::sleep_for(std::chrono::duration<double>(wait));
    }
    if (!r.delivered && r.attempts > 1) {
      r.error += " (after " + std::to_string(r.attempts) + " attempts)";
    }
    r.latency_ms =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    return r;
  }

 private:
  double timeout_s_;
  uint32_t retries_;
  double backoff_s_;
  std::string origin_, path_, key_;
  std::counting_semaphore<> slots_;
};

// Fails, naming the field, when the base URL cannot be used.
Result<std::shared_ptr<AgentBackend>> make_llm_backend(const LlmSection& l) {
  const std::string& url = l.base_url;
  const size_t scheme_end = url.find("://");
  if (scheme_end == std::string::npos) {
    return Status::invalid_argument("llm.base_url: expected an http:// or https:// URL, got \"" +
                                    url + "\"");
  }
  const size_t path_start = url.find('/', scheme_end + 3);
  std::string origin = url.substr(0, path_start);
  std::string path = path_start == std::string::npos ? "" : url.substr(path_start);
  while (!path.empty() && path.back() == '/') path.pop_back();
  path += "/chat/completions";
  std::string key = l.api_key;
  if (key.empty() && !l.api_key_env.empty()) {
    if (const char* k = std::getenv(l.api_key_env.c_str()); k != nullptr) key = k;
  }
  return std::shared_ptr<AgentBackend>(
      std::make_shared<LlmBackend>(l, std::move(origin), std::move(path), std::move(key)));
}

// One transport for every llm agent, so its concurrency limit holds over all of them.
Result<std::shared_ptr<AgentBackend>> transport(const CampaignConfig& c, const AgentConfig&,
                                                std::shared_ptr<AgentBackend>& shared) {
  if (!shared) {
    auto b = make_llm_backend(section_of(c));
    if (!b) return Status::invalid_argument(c.file.string() + ": " + b.status().message());
    shared = std::move(b.value());
  }
  return shared;
}

}  // namespace

extern const AgentBackendKind kLlmBackend{
    .name = "llm",
    .format = &kLlmExchange,
    .section = kSection,
    .read_section = read_section,
    .agent_fields = kAgentFields,
    .read_agent = read_agent,
    .core_spec = core_spec,
    .transport = transport,
    .spawn = spawn_external_agent,
};

}  // namespace arc::actors
