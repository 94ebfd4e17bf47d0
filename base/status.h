#pragma once
// Status and Result<T>: how storage, I/O and parsing report failure. Exceptions never cross a
// module boundary; a caller always sees a code and a message that names what went wrong.
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <variant>

namespace arc {

class Status {
 public:
  enum class Code : uint8_t {
    kOk = 0,
    kNotFound,
    kCorruption,       // stored bytes fail their CRC or verifier
    kInvalidArgument,  // bad user input (campaign, problem, flags)
    kIoError,
    kUnavailable,  // e.g. no GPU, worker gone
    kTimeout,
    kInternal,
    // A file a run read (its campaign, problem, shared includes or skills) is neither in its
    // log nor unchanged at the path the log names (actors/run_inputs.h); exit code 6.
    kMissingInput,
  };

  Status() = default;
  static Status ok() { return {}; }
  static Status not_found(std::string m) { return {Code::kNotFound, std::move(m)}; }
  static Status corruption(std::string m) { return {Code::kCorruption, std::move(m)}; }
  static Status invalid_argument(std::string m) { return {Code::kInvalidArgument, std::move(m)}; }
  static Status io_error(std::string m) { return {Code::kIoError, std::move(m)}; }
  static Status unavailable(std::string m) { return {Code::kUnavailable, std::move(m)}; }
  static Status timeout(std::string m) { return {Code::kTimeout, std::move(m)}; }
  static Status internal(std::string m) { return {Code::kInternal, std::move(m)}; }
  static Status missing_input(std::string m) { return {Code::kMissingInput, std::move(m)}; }

  bool is_ok() const { return code_ == Code::kOk; }
  explicit operator bool() const { return is_ok(); }
  Code code() const { return code_; }
  const std::string& message() const { return message_; }
  std::string to_string() const;

 private:
  Status(Code c, std::string m) : code_(c), message_(std::move(m)) {}
  Code code_ = Code::kOk;
  std::string message_;
};

const char* to_string(Status::Code c);

inline std::string Status::to_string() const {
  if (is_ok()) return "OK";
  return std::string(arc::to_string(code_)) + ": " + message_;
}

inline const char* to_string(Status::Code c) {
  switch (c) {
    case Status::Code::kOk:
      return "OK";
    case Status::Code::kNotFound:
      return "not found";
    case Status::Code::kCorruption:
      return "corruption";
    case Status::Code::kInvalidArgument:
      return "invalid argument";
    case Status::Code::kIoError:
      return "I/O error";
    case Status::Code::kUnavailable:
      return "unavailable";
    case Status::Code::kTimeout:
      return "timeout";
    case Status::Code::kInternal:
      return "internal error";
    case Status::Code::kMissingInput:
      return "missing input";
  }
  return "unknown";
}

// A value or the Status explaining why there is none.
template <class T>
class Result {
 public:
  Result(T value) : v_(std::move(value)) {}         // NOLINT: implicit by design
  Result(Status status) : v_(std::move(status)) {}  // NOLINT: implicit by design
  bool ok() const { return v_.index() == 0; }
  explicit operator bool() const { return ok(); }
  T& value() & { return std::get<0>(v_); }
  const T& value() const& { return std::get<0>(v_); }
  T&& value() && { return std::get<0>(std::move(v_)); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }
  const Status& status() const {
    static const Status kOk;
    return ok() ? kOk : std::get<1>(v_);
  }

 private:
  std::variant<T, Status> v_;
};

}  // namespace arc
