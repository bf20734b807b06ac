package outcome

import "testing"

// TestClassifyAPIError is the table both readers use. The rows marked
// "changed" are where internal/claude and internal/driver had disagreed;
// each names the behaviour that moved and from which old table.
func TestClassifyAPIError(t *testing.T) {
	const credit = "Your credit balance is too low to access the Anthropic API. Please go to Plans & Billing to upgrade or purchase credits."
	for _, tc := range []struct {
		name   string
		e      APIError
		class  Class
		reason string
	}{
		{"credit", APIError{400, "invalid_request_error", credit}, Account, ReasonCredit},
		{"credit, the CLI's sentence", APIError{400, "", "Credit balance is too low"}, Account, ReasonCredit},
		{"credit without a status", APIError{0, "", "Credit balance is too low"}, Account, ReasonCredit},
		// changed (claude): "credit balance" anywhere in the message was credit.
		{"credit balance quoted in a bad request", APIError{400, "invalid_request_error", "messages.0: credit balance is too low"}, Fatal, ReasonBadRequest},
		{"credit balance quoted in a 404", APIError{404, "not_found_error", "model: your credit balance is too low"}, Fatal, ReasonModelNotFound},

		{"usage limit 429", APIError{429, "rate_limit_error", "You have reached your specified API usage limits. You will regain access on 2030-07-01 at 00:00 UTC."}, Account, ReasonUsageLimit},
		{"usage limit 403", APIError{403, "permission_error", "organization usage limit reached"}, Account, ReasonUsageLimit},
		// changed (driver): a 400 naming a usage limit was the task's bad request.
		{"usage limit 400", APIError{400, "invalid_request_error", "You have reached your specified API usage limits."}, Account, ReasonUsageLimit},
		{"spend limit without a status", APIError{0, "", "monthly spend limit reached"}, Account, ReasonUsageLimit},
		{"per-minute rate limit passes", APIError{429, "rate_limit_error", "Number of request tokens has exceeded your per-minute rate limit"}, Infra, ReasonRateLimit},

		{"401", APIError{401, "authentication_error", "invalid x-api-key"}, Account, ReasonAuth},
		{"authentication_error without a status", APIError{0, "authentication_error", "invalid x-api-key"}, Account, ReasonAuth},

		// The 403 class.
		// changed (driver): permission_error was fatal/forbidden.
		{"403 permission_error", APIError{403, "permission_error", "Your API key does not have permission to use the specified resource."}, Account, ReasonAuth},
		{"permission_error without a status", APIError{0, "permission_error", "key revoked"}, Account, ReasonAuth},
		// changed (claude): any other 403 was infra/forbidden.
		{"403 from a proxy", APIError{403, "", "<html><body>403 Forbidden</body></html>"}, Fatal, ReasonForbidden},
		{"403 of another type", APIError{403, "forbidden", "blocked by policy"}, Fatal, ReasonForbidden},

		{"404", APIError{404, "not_found_error", "model: claude-x"}, Fatal, ReasonModelNotFound},
		{"413", APIError{413, "request_too_large", "request too large"}, Task, ReasonTooLarge},
		{"prompt too long", APIError{400, "invalid_request_error", "prompt is too long: 210000 tokens > 200000 maximum"}, Task, ReasonContextTooLong},
		{"400", APIError{400, "invalid_request_error", "messages: roles must alternate"}, Fatal, ReasonBadRequest},
		{"529", APIError{529, "overloaded_error", "Overloaded"}, Infra, ReasonOverloaded},
		{"overloaded in a stream", APIError{200, "overloaded_error", "Overloaded"}, Infra, ReasonOverloaded},
		{"rate limit in a stream", APIError{200, "rate_limit_error", "slow down"}, Infra, ReasonRateLimit},
		{"502", APIError{502, "", "Bad Gateway"}, Infra, ReasonServerError},
		{"api_error in a stream", APIError{200, "api_error", "Internal server error"}, Infra, ReasonServerError},
		{"nothing known", APIError{0, "", "something new"}, Infra, ReasonAPIError},
		{"an unknown type in a stream", APIError{200, "invalid_request_error", "x"}, Infra, ReasonAPIError},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if c, r := ClassifyAPIError(tc.e); c != tc.class || r != tc.reason {
				t.Errorf("ClassifyAPIError(%+v) = %s/%s, want %s/%s", tc.e, c, r, tc.class, tc.reason)
			}
		})
	}
}
