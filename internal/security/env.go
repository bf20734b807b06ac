package security

import "strings"

// dangerousExact are variables that change how programs load or run, give
// access to the user's agent or credentials, or change Claude Code's own
// behaviour; a worker never gets them unless the config overrides by name.
var dangerousExact = map[string]string{
	"NODE_OPTIONS":                   "injects code into every Node.js process, Claude Code included",
	"BASH_ENV":                       "runs a script in every non-interactive bash",
	"ENV":                            "runs a script in every sh",
	"PYTHONSTARTUP":                  "runs a script in every Python",
	"PYTHONPATH":                     "changes which code Python imports",
	"PERL5OPT":                       "injects options into every Perl",
	"PERL5LIB":                       "changes which code Perl loads",
	"RUBYOPT":                        "injects options into every Ruby",
	"SSH_AUTH_SOCK":                  "lends the user's SSH agent (every key in it)",
	"IS_SANDBOX":                     "changes Claude Code's permission and retry behaviour",
	"GOOGLE_APPLICATION_CREDENTIALS": "points at cloud credentials",
	"KUBECONFIG":                     "points at cluster credentials",
	"DOCKER_HOST":                    "gives control of a container engine",
	"GITHUB_TOKEN":                   "is a VCS credential",
	"GH_TOKEN":                       "is a VCS credential",
	"GITLAB_TOKEN":                   "is a VCS credential",
	"NPM_TOKEN":                      "is a registry credential",
}

var dangerousPrefixes = map[string]string{
	"LD_":     "changes how every program is loaded (LD_PRELOAD, LD_LIBRARY_PATH)",
	"DYLD_":   "changes how every program is loaded",
	"GIT_":    "overrides git's configuration and locations",
	"AWS_":    "is a cloud credential or selects one",
	"AZURE_":  "is a cloud credential or selects one",
	"GCLOUD_": "is a cloud credential or selects one",
}

// credentialWords mark names that usually hold a secret.
var credentialWords = []string{"TOKEN", "SECRET", "PASSWORD", "PASSWD", "CREDENTIAL", "PRIVATE_KEY", "API_KEY", "ACCESS_KEY"}

// DangerousEnv says why passing the variable name to a worker is dangerous,
// or "" when it is not. The worker environment is an allowlist anyway; this
// decides which names the config may list only with an explicit override.
func DangerousEnv(name string) string {
	n := strings.ToUpper(name)
	if why, ok := dangerousExact[n]; ok {
		return why
	}
	for p, why := range dangerousPrefixes {
		if strings.HasPrefix(n, p) {
			return why
		}
	}
	for _, w := range credentialWords {
		if strings.Contains(n, w) {
			return "looks like a credential (" + w + ")"
		}
	}
	return ""
}
