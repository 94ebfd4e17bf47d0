#include "replay/progress.h"

#include <algorithm>

#include "actors/view.h"

namespace arc::replay {

ProgressPrinter::ProgressPrinter(FILE* out, bool terminal, uint32_t budget)
    : out_(out), terminal_(terminal), budget_(budget) {}

void ProgressPrinter::on_event(const events::Event& e) {
  std::lock_guard<std::mutex> lock(mu_);
  switch (e.payload.type) {
    case fb::Payload::AgentSpawned: {
      const auto* p = e.payload.AsAgentSpawned();
      order_.push_back(p->agent);
      rows_[p->agent].skill = p->skill;
      break;
    }
    case fb::Payload::StrategyDrafted: {
      const auto* p = e.payload.AsStrategyDrafted();
      rows_[p->agent].skill = p->to_skill;
      if (!terminal_) {
        std::fprintf(out_, "           %s drafts %s -> %s (%s)\n", p->agent.c_str(),
                     p->from_skill.c_str(), p->to_skill.c_str(), p->reason.c_str());
      }
      break;
    }
    case fb::Payload::WorkerChanged: {
      // Always said, in a terminal too: a lost worker, and a paused campaign, need seeing.
      const auto* p = e.payload.AsWorkerChanged();
      std::string line = "worker     " + p->worker + " " + p->state;
      if (!p->reason.empty()) line += " (" + p->reason.substr(0, 200) + ")";
      if (!p->requeued.empty())
        line += "; its candidate " + p->requeued.substr(0, 12) + " goes to another";
      line += "; " + std::to_string(p->live) + " live";
      if (p->live == 0) line += ": the campaign is paused until a worker comes back or joins";
      std::fprintf(out_, "%s\n", line.c_str());
      break;
    }
    case fb::Payload::CandidateProposed: {
      const auto* p = e.payload.AsCandidateProposed();
      moves_[p->candidate_hash] = p->move;
      break;
    }
    case fb::Payload::AgentExchange: {
      // A failed exchange decides nothing: say why, so a dead model server is visible at once.
      const auto* p = e.payload.AsAgentExchange();
      if (p->ok) break;
      rows_[p->agent].last = "no candidate: " + p->error.substr(0, 60);
      if (terminal_) {
        redraw();
      } else {
        std::fprintf(out_, "           %s %s exchange gave no candidate (%.0f ms): %s\n",
                     p->agent.c_str(), p->backend.c_str(), p->latency_ms,
                     p->error.substr(0, 160).c_str());
      }
      break;
    }
    case fb::Payload::Decision: {
      const auto* p = e.payload.AsDecision();
      const char* verdict = fb::EnumNameVerdict(p->verdict);
      if (p->agent == actors::kCampaignActor) {
        std::fprintf(out_, "baseline   %s: %s\n", verdict, p->reason.c_str());
        break;
      }
      if (p->verdict == fb::Verdict::STOP) break;
      ++decided_;
      Row& r = rows_[p->agent];
      ++r.candidates;
      if (p->verdict == fb::Verdict::KEEP) {
        ++r.keeps;
        r.best = std::max(r.best, p->score);
        best_ = std::max(best_, p->score);
      }
      if (p->verdict == fb::Verdict::REJECT) ++r.rejects;
      r.last = std::string(verdict) + " " + moves_[p->candidate_hash];
      if (terminal_) {
        redraw();
      } else {
        std::string why = p->verdict == fb::Verdict::REJECT ? "  " + p->reason.substr(0, 100) : "";
        std::fprintf(out_, "[%3u/%3u] %-10s %-12s %-6s %6.3fx  best %6.3fx  %s%s\n", decided_,
                     budget_, p->agent.c_str(), r.skill.c_str(), verdict, p->score, best_,
                     moves_[p->candidate_hash].c_str(), why.c_str());
        std::fflush(out_);  // a line per decision, live through pipes and `tee` too
      }
      break;
    }
    default:
      break;
  }
  std::fflush(out_);
}

void ProgressPrinter::redraw() {
  if (drawn_lines_ > 0) std::fprintf(out_, "\x1b[%dA", drawn_lines_);
  std::fprintf(out_, "\x1b[2K candidates %u/%u   best %.3fx\n", decided_, budget_, best_);
  std::fprintf(out_, "\x1b[2K %-12s %-14s %6s %6s %7s %9s  %s\n", "agent", "skill", "cand", "keep",
               "reject", "best", "last");
  for (const auto& name : order_) {
    const Row& r = rows_[name];
    std::fprintf(out_, "\x1b[2K %-12s %-14s %6u %6u %7u %8.3fx  %.40s\n", name.c_str(),
                 r.skill.c_str(), r.candidates, r.keeps, r.rejects, r.best, r.last.c_str());
  }
  drawn_lines_ = 2 + static_cast<int>(order_.size());
}

void ProgressPrinter::finish() {
  std::lock_guard<std::mutex> lock(mu_);
  if (terminal_) std::fprintf(out_, "\n");
  std::fflush(out_);
}

}  // namespace arc::replay
