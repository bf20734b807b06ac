package security

import "testing"

func TestDangerousEnv(t *testing.T) {
	dangerous := []string{"LD_PRELOAD", "LD_LIBRARY_PATH", "DYLD_INSERT_LIBRARIES", "NODE_OPTIONS", "BASH_ENV", "ENV",
		"PYTHONSTARTUP", "GIT_DIR", "GIT_SSH_COMMAND", "AWS_SECRET_ACCESS_KEY", "AWS_PROFILE", "SSH_AUTH_SOCK",
		"IS_SANDBOX", "GITHUB_TOKEN", "SLACK_BOT_TOKEN", "DB_PASSWORD", "STRIPE_SECRET_KEY", "OPENAI_API_KEY", "azure_client_secret"}
	safe := []string{"GOPATH", "GOCACHE", "GOFLAGS", "CARGO_HOME", "JAVA_HOME", "CI", "NO_COLOR", "HTTPS_PROXY", "MY_FLAG"}
	for _, n := range dangerous {
		if DangerousEnv(n) == "" {
			t.Errorf("%s not flagged", n)
		}
	}
	for _, n := range safe {
		if why := DangerousEnv(n); why != "" {
			t.Errorf("%s flagged: %s", n, why)
		}
	}
}
