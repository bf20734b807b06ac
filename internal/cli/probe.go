package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"

	"github.com/zergrush/zerg/internal/attempt"
	"github.com/zergrush/zerg/internal/claude"
	"github.com/zergrush/zerg/internal/cliprobe"
	"github.com/zergrush/zerg/internal/config"
	"github.com/zergrush/zerg/internal/run"
	"github.com/zergrush/zerg/internal/runstate"
	"github.com/zergrush/zerg/internal/textx"
)

// Before a rush writes anything it tries what every worker will need: the
// Claude Code binary answers --version, and the model API's endpoint
// answers and takes the key. A wrong binary, base URL or key would
// otherwise fail every attempt one after the other, as infrastructure
// failures retried for minutes, or be blamed on the workers.

// probeBinary runs the binary workers will run with --version, and
// refuses a release older than the oldest zerg supports (claude.ProbeBinary).
func probeBinary(ctx context.Context, loc claude.Location, cfg config.Config) error {
	return badInput(claude.ProbeBinary(ctx, loc, cfg.Claude.Path != ""))
}

// probeModel is the model of the endpoint probe: any model the API knows
// will do, since counting tokens is free and a refused key is refused
// before the model is looked at.
const probeModel = "claude-haiku-4-5-20251001"

// probeEndpoint asks the model API to count the tokens of a word (free)
// with the workers' credentials. It fails, naming the setting to fix, when
// the endpoint cannot be reached or refuses the key; an endpoint that does
// not offer count_tokens (a proxy), or any other answer, passes: it is
// there and did not refuse the key.
func probeEndpoint(ctx context.Context, api claude.APISettings, cfg config.Config) error {
	base := api.BaseURL
	setting := "ANTHROPIC_BASE_URL"
	if cfg.Claude.BaseURL != "" {
		setting = "claude.base_url in .zerg/config.yaml"
	}
	if base == "" {
		base, setting = "https://api.anthropic.com", "the default API (https://api.anthropic.com)"
	}
	ctx, cancel := context.WithTimeout(ctx, claude.ProbeTimeout)
	defer cancel()
	body := `{"model":"` + probeModel + `","messages":[{"role":"user","content":"ping"}]}`
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, strings.TrimSuffix(base, "/")+"/v1/messages/count_tokens", strings.NewReader(body))
	if err != nil {
		return usageErrorf("%s %q is not a URL: %v", setting, base, err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("anthropic-version", "2023-06-01")
	req.Header.Set("anthropic-beta", "token-counting-2024-11-01")
	if api.APIKey != "" {
		req.Header.Set("X-Api-Key", string(api.APIKey))
	}
	if api.AuthToken != "" {
		req.Header.Set("Authorization", "Bearer "+string(api.AuthToken))
	}
	if api.Subscription() {
		// As the CLI sends a subscription token (docs/configuration.md).
		req.Header.Set("Authorization", "Bearer "+string(api.OAuthToken))
		req.Header.Set("anthropic-beta", claude.OAuthBeta+",token-counting-2024-11-01")
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		var msg string
		if errors.Is(err, context.DeadlineExceeded) {
			msg = fmt.Sprintf("no answer within %s", claude.ProbeTimeout)
		} else {
			msg = err.Error()
			for _, k := range api.Secrets() {
				msg = strings.ReplaceAll(msg, k, "***")
			}
		}
		return usageErrorf("the model API at %s (%s) cannot be reached: %s; fix %s, or rehearse offline with --rehearse", base, setting, msg, setting)
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	if resp.StatusCode == http.StatusUnauthorized || resp.StatusCode == http.StatusForbidden && strings.Contains(string(data), "authentication_error") {
		var e struct {
			Error struct{ Type, Message string } `json:"error"`
		}
		_ = json.Unmarshal(data, &e)
		_, key := claude.CredentialSource(attempt.CredentialVars(cfg), api, os.Getenv)
		return usageErrorf("the model API at %s refused the key in %s (%d %s: %s); set a valid key or token there",
			base, key, resp.StatusCode, e.Error.Type, textx.Clip(textx.OneLine(e.Error.Message), 200))
	}
	return nil
}

// launchNote is the line a rush prints after its launch check passed, ""
// when there is nothing to say: a release newer than zerg has tested, and
// what its requests carry that zerg has not reviewed (forwarded and
// audited).
func launchNote(rep *cliprobe.Report) string {
	if rep == nil {
		return ""
	}
	var parts []string
	if claude.SupportOf(rep.Version) == claude.NewerTested {
		parts = append(parts, fmt.Sprintf("claude %s is newer than zerg has tested (%s); its launch check passed", rep.Version, claude.TestedVersion))
	}
	if len(rep.Unreviewed) > 0 {
		parts = append(parts, fmt.Sprintf("its requests carry what zerg has not reviewed (%s): forwarded and audited (gateway.strict refuses it)",
			strings.Join(rep.Unreviewed, ", ")))
	}
	return strings.Join(parts, "; ")
}

// runModels are the models a run's workers use (run.WorkerModels).
func runModels(p runstate.Projection, cfg config.Config, cli *cliprobe.Report) []string {
	return run.WorkerModels(p, cfg, cli)
}
