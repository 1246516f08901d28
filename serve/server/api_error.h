// ApiError: a request the OpenAI-compatible server refuses, with the HTTP status and the body
// fields vLLM (>= 0.10.1, entrypoints/openai/protocol.py ErrorResponse) sends:
// {"error": {"message": ..., "type": "BadRequestError", "param": ..., "code": 400}}.
// Thrown while a request is parsed and checked; the session turns it into the response.
#pragma once

#include <stdexcept>
#include <string>

namespace servesim {

class ApiError : public std::runtime_error {
 public:
  // `param`: the request field at fault ("" when none: the body is sent with "param": null).
  ApiError(int status, std::string message, std::string param = "")
      : std::runtime_error(std::move(message)), status_(status), param_(std::move(param)) {}

  int status() const { return status_; }
  const std::string& param() const { return param_; }
  // vLLM's error type for the status: "BadRequestError", "NotFoundError", ...
  std::string type() const {
    switch (status_) {
      case 400:
        return "BadRequestError";
      case 404:
        return "NotFoundError";
      case 405:
        return "MethodNotAllowed";
      case 413:
        return "RequestEntityTooLarge";
      case 431:
        return "RequestHeaderFieldsTooLarge";
      case 503:
        return "ServiceUnavailableError";
      default:
        return "InternalServerError";
    }
  }

 private:
  int status_;
  std::string param_;
};

}  // namespace servesim
