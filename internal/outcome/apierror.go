package outcome

import "strings"

// APIError is one error answer of the Messages API: what the gateway
// recorded, or what the CLI's rendering of it says (internal/claude reads
// that back).
type APIError struct {
	Status  int    // HTTP status; 0 when the CLI did not say; 200 for an error event in a stream
	Type    string // the API's error type ("permission_error"), "" when unknown or not an API error body
	Message string // the API's message
}

// ClassifyAPIError is the one table from an API error answer to a class and
// a reason, used for the CLI's word (internal/claude) and for the
// gateway's record (internal/driver); docs/driver.md, "Outcome classes",
// and docs/cost.md, "Account errors", are its prose. Reason ReasonAPIError
// means the answer names nothing this table knows.
//
// Three choices, each where the two readers had disagreed:
//
//   - Credit is a message that starts with the API's words ("Your credit
//     balance is too low", or the CLI's "Credit balance is too low"), not one
//     that contains them. An error message can quote the request (a 404
//     names the model asked for), and in sandbox mode code in the sandbox
//     chooses requests: a quoted "credit balance" must not stop the whole
//     run as an account error.
//   - A 403 with type permission_error is Anthropic's answer to a key that
//     may not do what it asked (a revoked key, a workspace or an
//     organisation without access): account/auth, like a 401. Every request
//     with that key gets the same answer, so launching stops and the user is
//     told to fix the key, whatever the driver.
//   - Any other 403 comes from something in front of the API (a proxy or a
//     gateway in ANTHROPIC_BASE_URL, a firewall): fatal/forbidden. Its
//     refusal is a policy, which retrying does not change (the CLI does not
//     retry a 403 either); as infra it was retried with backoff for every
//     task before the run failed anyway, with the cause buried. Only a
//     known error type tells the two apart: the pinned CLI reports every
//     403 as its own authentication_failed without the type, which
//     internal/claude takes as account/auth before this table's 403 row.
//
// A bad request (400) is fatal here: the CLI's own request is malformed,
// which no retry fixes. internal/driver makes it the task's when code in
// the sandbox may have sent it.
func ClassifyAPIError(e APIError) (Class, string) {
	st, msg := e.Status, strings.ToLower(strings.TrimSpace(e.Message))
	switch {
	case strings.HasPrefix(msg, "your credit balance is too low") || strings.HasPrefix(msg, "credit balance is too low"):
		return Account, ReasonCredit
	// An organisation's or a subscription's spending or usage limit; not
	// the per-minute rate limit, which passes.
	case (st == 429 || st == 403 || st == 400 || st == 0) &&
		(strings.Contains(msg, "usage limit") || strings.Contains(msg, "spend limit") || strings.Contains(msg, "spending limit")):
		return Account, ReasonUsageLimit
	case st == 401 || e.Type == "authentication_error":
		return Account, ReasonAuth
	case (st == 403 || st == 0) && e.Type == "permission_error":
		return Account, ReasonAuth
	case st == 403:
		return Fatal, ReasonForbidden
	case st == 404:
		return Fatal, ReasonModelNotFound
	case st == 413:
		return Task, ReasonTooLarge
	case st == 400 && strings.Contains(msg, "prompt is too long"):
		return Task, ReasonContextTooLong
	case st == 400:
		return Fatal, ReasonBadRequest
	case st == 429 || e.Type == "rate_limit_error":
		return Infra, ReasonRateLimit
	case st == 529 || e.Type == "overloaded_error":
		return Infra, ReasonOverloaded
	case st >= 500 && st <= 599 || e.Type == "api_error":
		return Infra, ReasonServerError
	}
	return Infra, ReasonAPIError
}
