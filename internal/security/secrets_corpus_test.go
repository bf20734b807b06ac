package security

import (
	"encoding/base64"
	"fmt"
	"math/rand/v2"
	"strings"
)

// The corpus is fake secrets in realistic surroundings. Every value is built
// at run time from a fixed seed and split literals, so this file itself holds
// nothing a secret scanner (ours, gitleaks, GitHub push protection) flags.

const (
	alnum    = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
	upper32  = "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567"
	hexLower = "0123456789abcdef"
	b64      = alnum + "+/"
	urlSafe  = alnum + "-_"
	digits   = "0123456789"
	lower    = "abcdefghijklmnopqrstuvwxyz"
)

// fakeGen draws random strings from a seeded generator: the same corpus on
// every run, so a failure is reproducible.
type fakeGen struct{ r *rand.Rand }

func newFakeGen(seed uint64) *fakeGen {
	return &fakeGen{rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))}
}

func (g *fakeGen) s(alphabet string, n int) string {
	b := make([]byte, n)
	for i := range b {
		b[i] = alphabet[g.r.IntN(len(alphabet))]
	}
	return string(b)
}

// join assembles a token from pieces, so no literal in this file looks like one.
func join(parts ...string) string { return strings.Join(parts, "") }

// corpusCase is one kind of secret: the file it sits in, the file's content,
// and the random part that must never show up in a report.
type corpusCase struct {
	kind      string
	path      string
	content   string
	secret    string // the value as written
	anthropic bool   // must always be detected
}

// pem builds a PEM block of the given type with a random base64 body.
func (g *fakeGen) pem(kind string, bodyLen int) (block, body string) {
	body = g.s(b64, bodyLen)
	var lines []string
	for i := 0; i < len(body); i += 64 {
		lines = append(lines, body[i:min(i+64, len(body))])
	}
	marker := join(kind, "PRIV", "ATE KEY")
	return join("-----BEG", "IN ", marker, "-----\n", strings.Join(lines, "\n"), "\n-----END ", marker, "-----"), body
}

func b64url(s string) string { return base64.RawURLEncoding.EncodeToString([]byte(s)) }

// secretCorpus returns at least 20 kinds of fake secrets.
func secretCorpus(seed uint64) []corpusCase {
	g := newFakeGen(seed)
	var cs []corpusCase
	add := func(kind, path, content, secret string) {
		cs = append(cs, corpusCase{kind: kind, path: path, content: content, secret: secret,
			anthropic: strings.HasPrefix(kind, "anthropic")})
	}

	akid := join("AK", "IA", g.s(upper32, 16))
	add("aws-access-key-id", "deploy/aws.env", "AWS_REGION=eu-west-1\nAWS_ACCESS_KEY_ID="+akid+"\n", akid)
	aws := g.s(b64, 40)
	add("aws-secret-access-key", "home/.aws/credentials",
		"[default]\nregion = eu-west-1\naws_secret_access_key = "+aws+"\n", aws)

	ghp := join("gh", "p_", g.s(alnum, 36))
	add("github-pat-classic", "scripts/release.sh", "#!/bin/sh\nexport GH_TOKEN="+ghp+"\ngh release create v1\n", ghp)
	ghf := join("github", "_pat_", g.s(alnum, 22), "_", g.s(alnum, 59))
	add("github-pat-fine-grained", ".github/ci.yaml", "env:\n  TOKEN: "+ghf+"\n", ghf)
	glp := join("gl", "pat-", g.s(urlSafe, 20))
	add("gitlab-pat", "ci/gitlab.py", "import gitlab\ngl = gitlab.Gitlab(url, private_token=\""+glp+"\")\n", glp)

	xb := join("xo", "xb-", g.s(digits, 12), "-", g.s(digits, 13), "-", g.s(alnum, 24))
	add("slack-bot-token", "bot/config.js", "module.exports = {\n  slackToken: '"+xb+"',\n};\n", xb)
	xp := join("xo", "xp-", g.s(digits, 12), "-", g.s(digits, 12), "-", g.s(digits, 13), "-", g.s(hexLower, 32))
	add("slack-user-token", "bot/user.env", "SLACK_USER_TOKEN="+xp+"\n", xp)
	hook := join("https://hooks.", "slack.com/services/", "T", g.s(upper32, 10), "/B", g.s(upper32, 10), "/", g.s(alnum, 24))
	add("slack-webhook-url", "ops/alerts.yaml", "alerting:\n  webhook: "+hook+"\n", hook)

	skl := join("sk", "_live_", g.s(alnum, 24))
	add("stripe-live-key", "billing/stripe.go", "package billing\n\nconst stripeKey = \""+skl+"\"\n", skl)
	skt := join("sk", "_test_", g.s(alnum, 48))
	add("stripe-test-key", "billing/.env.test", "STRIPE_SECRET_KEY="+skt+"\n", skt)

	gk := join("AI", "za", g.s(urlSafe, 35))
	add("google-api-key", "web/maps.html", "<script src=\"https://maps.googleapis.com/maps/api/js?key="+gk+"\"></script>\n", gk)

	saBlock, saBody := g.pem("", 1600)
	sa := fmt.Sprintf(`{
  "type": "service_account",
  "project_id": "demo-project-123456",
  "private_key_id": "%s",
  "private_key": "%s\n",
  "client_email": "deployer@demo-project-123456.iam.gserviceaccount.com"
}
`, g.s(hexLower, 40), strings.ReplaceAll(saBlock, "\n", `\n`))
	add("gcp-service-account-json", "secrets/gcp-sa.json", sa, saBody)

	rsa, rsaBody := g.pem("RSA ", 1200)
	add("rsa-private-key", "keys/id_rsa.pem", rsa+"\n", rsaBody)
	ec, ecBody := g.pem("EC ", 160)
	add("ec-private-key", "keys/ec.pem", ec+"\n", ecBody)
	ossh, osshBody := g.pem("OPENSSH ", 400)
	add("openssh-private-key", "home/.ssh/id_ed25519", ossh+"\n", osshBody)

	ant := join("sk-", "ant-", "api03-", g.s(urlSafe, 93), "AA")
	add("anthropic-api-key", "agent/.env", "ANTHROPIC_API_KEY="+ant+"\n", ant)
	antShort := join("sk-", "ant-", "api03-", g.s(urlSafe, 80))
	add("anthropic-api-key-other-length", "agent/client.py",
		"import anthropic\nclient = anthropic.Anthropic(api_key=\""+antShort+"\")\n", antShort)
	adm := join("sk-", "ant-", "admin01-", g.s(urlSafe, 93), "AA")
	add("anthropic-admin-key", "agent/admin.ts", "const admin = new Admin({ key: `"+adm+"` });\n", adm)
	oat := join("sk-", "ant-", "oat01-", g.s(urlSafe, 93), "AA")
	add("anthropic-oauth-token", "home/.claude/env.sh", "export CLAUDE_CODE_OAUTH_TOKEN="+oat+"\n", oat)
	ort := join("sk-", "ant-", "ort01-", g.s(urlSafe, 93), "AA")
	add("anthropic-oauth-refresh-token", "home/.claude/creds.json",
		`{"claudeAiOauth":{"refreshToken":"`+ort+`","expiresAt":1767225600000}}`+"\n", ort)

	oai := join("sk-", "proj-", g.s(urlSafe, 74), "T3Blbk", "FJ", g.s(urlSafe, 74))
	add("openai-api-key", "ml/openai.env", "OPENAI_API_KEY="+oai+"\n", oai)
	npm := join("np", "m_", g.s(alnum, 36))
	add("npm-token", "web/.npmrc", "//registry.npmjs.org/:_authToken="+npm+"\n", npm)
	pypi := join("py", "pi-", "AgEIcHlwaS5vcmc", g.s(urlSafe, 140))
	add("pypi-token", "home/.pypirc", "[pypi]\nusername = __token__\npassword = "+pypi+"\n", pypi)
	tw := join("S", "K", g.s(hexLower, 32))
	add("twilio-api-key", "sms/twilio.rb", "client = Twilio::REST::Client.new('"+tw+"', secret)\n", tw)
	sg := join("S", "G.", g.s(urlSafe, 22), ".", g.s(urlSafe, 43))
	add("sendgrid-api-key", "mail/sendgrid.env", "SENDGRID_API_KEY="+sg+"\n", sg)
	mg := join("ke", "y-", g.s(hexLower, 32))
	add("mailgun-api-key", "mail/mailgun.ini", "[mailgun]\nmailgun_api_key = "+mg+"\n", mg)
	jwt := join(b64url(`{"alg":"HS256","typ":"JWT"}`), ".",
		b64url(fmt.Sprintf(`{"sub":"%s","name":"Demo User","iat":1700000000}`, g.s(digits, 10))), ".", g.s(urlSafe, 43))
	add("jwt", "api/fixtures_auth.http", "GET /me\nAuthorization: Bearer "+jwt+"\n", jwt)
	az := g.s(b64, 86) + "=="
	add("azure-storage-connection-string", "infra/appsettings.json",
		`{"Storage": "DefaultEndpointsProtocol=https;AccountName=demostore;AccountKey=`+az+`;EndpointSuffix=core.windows.net"}`+"\n", az)
	her := fmt.Sprintf("%s-%s-%s-%s-%s", g.s(hexLower, 8), g.s(hexLower, 4), g.s(hexLower, 4), g.s(hexLower, 4), g.s(hexLower, 12))
	add("heroku-api-key", "deploy/heroku.sh", "HEROKU_API_KEY="+her+" heroku container:push web\n", her)
	do := join("do", "p_v1_", g.s(hexLower, 64))
	add("digitalocean-token", "infra/do.tf", "provider \"digitalocean\" {\n  token = \""+do+"\"\n}\n", do)
	pw := g.s(alnum, 18)
	add("database-url-password", "config/database.yml",
		"production:\n  url: postgres://app_user:"+pw+"@db.internal.example:5432/app\n", pw)
	shp := join("sh", "pat_", g.s(hexLower, 32))
	add("shopify-access-token", "shop/sync.py", "SHOPIFY_TOKEN = '"+shp+"'\n", shp)
	hf := join("h", "f_", g.s(lower, 34))
	add("huggingface-token", "ml/hub.sh", "huggingface-cli login --token "+hf+"\n", hf)
	return cs
}
