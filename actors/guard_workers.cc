// The guard's workers (actors/guard_state.h): one slot actor per worker, who is live, lost or
// refused, joins and losses logged as WorkerChanged, retries every kRetrySeconds, and the peaks
// measured on the first idle worker. The scheduling of work onto them is guard_actor.cc's.
#include <algorithm>

#include "actors/guard_state.h"
#include "actors/view.h"
#include "actors/worker_admission.h"

namespace arc::actors::guard_detail {
uint32_t live_workers(const GuardState& st) {
  return static_cast<uint32_t>(std::count_if(st.slots.begin(), st.slots.end(), [](const auto& s) {
    return s.at == WorkerSlot::Reach::kLive;
  }));
}

// An idle live worker, `prefer` first; slots.size() when none.
size_t idle_worker(const GuardState& st, size_t prefer) {
  auto idle = [&st](size_t i) {
    return i < st.slots.size() && st.slots[i].at == WorkerSlot::Reach::kLive && !st.slots[i].busy;
  };
  if (idle(prefer)) return prefer;
  for (size_t i = 0; i < st.slots.size(); ++i) {
    if (idle(i)) return i;
  }
  return st.slots.size();
}

// Logs the worker changes noted so far, once the campaign has started its log.
void log_changes(GuardActor self, CampaignContext* ctx) {
  auto& st = self->state;
  if (!st.started || st.unlogged_changes.empty()) return;
  event_list list;
  for (auto& c : st.unlogged_changes) {
    list.events.push_back(events::make_event(kGuardActor, std::move(c)));
  }
  st.unlogged_changes.clear();
  self->request(st.journal, caf::infinite, append_atom_v, std::move(list))
      .then([](const seq_list&) {}, [self, ctx](caf::error& err) { fail(self, ctx, err); });
}

void note_change(GuardActor self, CampaignContext* ctx, size_t i, const std::string& state,
                 const std::string& reason, const std::string& requeued) {
  auto& st = self->state;
  fb::WorkerChangedT c;
  c.worker = st.slots[i].name;
  c.state = state;
  c.device = st.slots[i].device;
  c.reason = reason;
  c.live = live_workers(st);
  c.requeued = requeued;
  st.unlogged_changes.push_back(std::move(c));
  log_changes(self, ctx);
}

namespace {

void schedule_retry(GuardActor self, size_t i) {
  auto& s = self->state.slots[i];
  if (s.retrying || s.at == WorkerSlot::Reach::kRefused) return;
  s.retrying = true;
  self->delayed_send(self, kRetrySeconds, retry_atom_v, static_cast<uint64_t>(i));
}

}  // namespace

// The worker went away during a job; `requeued` names the candidate whose work goes elsewhere.
void worker_lost(GuardActor self, CampaignContext* ctx, size_t i, const std::string& why,
                 const std::string& requeued) {
  auto& s = self->state.slots[i];
  s.busy = false;
  if (s.at == WorkerSlot::Reach::kLive) {
    s.at = WorkerSlot::Reach::kLost;
    note_change(self, ctx, i, "lost", why, requeued);
  }
  schedule_retry(self, i);
}

namespace {

// A worker answered a reach: admit it if it measures on the campaign's device model and on a
// device no live worker serves.
void admit(GuardActor self, CampaignContext* ctx, size_t i, const ConnectOutcome& o) {
  auto& st = self->state;
  auto& s = st.slots[i];
  s.retrying = false;
  if (!o.error.empty() && o.refused) {
    s.at = WorkerSlot::Reach::kRefused;  // its credentials will not change by waiting
    note_change(self, ctx, i, "refused", o.error);
    return;
  }
  if (!o.error.empty()) {
    if (s.at == WorkerSlot::Reach::kReaching) s.at = WorkerSlot::Reach::kLost;
    schedule_retry(self, i);
    return;
  }
  s.device = o.device;
  s.model = o.device_model;
  s.key = o.device_key;
  std::vector<LiveWorker> live;
  for (size_t j = 0; j < st.slots.size(); ++j) {
    if (j != i && st.slots[j].at == WorkerSlot::Reach::kLive)
      live.push_back({st.slots[j].name, st.slots[j].key});
  }
  const std::string refusal =
      admission_refusal(ctx->device_model, o.device_model, o.device_key, live);
  if (!refusal.empty()) {
    s.at = WorkerSlot::Reach::kRefused;
    note_change(self, ctx, i, "refused", refusal);
    return;
  }
  // Workers there from the start are named in CampaignStarted; a join is logged when a worker
  // comes (back) later, so that runs on the same workers log the same events.
  const bool later = s.at == WorkerSlot::Reach::kLost;
  s.at = WorkerSlot::Reach::kLive;
  if (later) note_change(self, ctx, i, "joined", "");
  serve_peaks(self, ctx);
  dispatch(self, ctx);
}

}  // namespace

void reach(GuardActor self, CampaignContext* ctx, size_t i) {
  auto& s = self->state.slots[i];
  s.retrying = true;
  self->request(s.actor, caf::infinite, reach_atom_v)
      .then([self, ctx, i](ConnectOutcome& o) { admit(self, ctx, i, o); },
            [self, ctx, i](caf::error& err) {
              ConnectOutcome o;
              o.error = self->system().render(err);
              admit(self, ctx, i, o);
            });
}

// Measures the peaks on the first idle worker for everyone who asked.
void serve_peaks(GuardActor self, CampaignContext* ctx) {
  auto& st = self->state;
  if (st.peaks_waiting.empty() || st.peaks_running) return;
  const size_t i = idle_worker(st, 0);
  if (i == st.slots.size()) return;
  st.peaks_running = true;
  st.slots[i].busy = true;
  self->request(st.slots[i].actor, caf::infinite, peaks_atom_v)
      .then(
          [self, ctx, i](PeaksOutcome& o) {
            auto& st = self->state;
            st.peaks_running = false;
            st.slots[i].busy = false;
            if (!o.lost.empty()) {
              worker_lost(self, ctx, i, o.lost, "");
            } else {
              if (o.peaks.device.empty()) o.peaks.device = st.slots[i].device;
              for (auto& rp : st.peaks_waiting) {
                if (o.error.empty()) {
                  rp.deliver(peaks_msg{o.peaks});
                } else {
                  rp.deliver(caf::make_error(caf::sec::runtime_error, o.error));
                }
              }
              st.peaks_waiting.clear();
            }
            serve_peaks(self, ctx);
            dispatch(self, ctx);
          },
          [self, ctx, i](caf::error& err) {
            self->state.peaks_running = false;
            worker_lost(self, ctx, i, self->system().render(err), "");
            serve_peaks(self, ctx);
          });
}

// One slot per worker of the campaign (or for its single evaluator), each asked at once which
// device it measures on.
void spawn_slots(GuardActor self, CampaignContext* ctx) {
  auto& st = self->state;
  std::vector<CampaignWorker*> workers;
  for (auto& w : ctx->workers) workers.push_back(&w);
  if (workers.empty()) {
    CampaignWorker& w = st.fallback.emplace_back();
    w.name = "local";
    w.evaluator = ctx->evaluator;
    workers.push_back(&w);
  }
  for (CampaignWorker* w : workers) {
    WorkerSlot s;
    s.name = w->name;
    s.local = w->local;
    s.actor = spawn_worker_slot(self->system(), w, &ctx->problem, ctx->detached_guard);
    self->link_to(s.actor);
    st.slots.push_back(std::move(s));
  }
  for (size_t i = 0; i < st.slots.size(); ++i) reach(self, ctx, i);
}

}  // namespace arc::actors::guard_detail
