package cluster

import "github.com/nats-io/nats-server/v2/server"

// AgentPermissions is the allow-list of one agent. Everything not listed is
// refused by the server (a permissions violation), including every other
// JetStream API call: stream/consumer create, update, delete and purge, KV
// and object access to other buckets, and any other agent's subjects.
//
// The subjects were taken from nats.go v1.55.0's jetstream package: which
// calls each client operation makes. Each entry says what needs it.
// Exported for a NATS server zerg does not embed: its agents' users need
// exactly these (docs/cluster.md, "Using an existing NATS server").
func AgentPermissions(agent string) *server.Permissions {
	bundles := "OBJ_" + BucketBundles
	results := "OBJ_" + ResultsBucket(agent)
	return &server.Permissions{
		Publish: &server.SubjectPermission{Allow: []string{
			// Claiming attempts from the coordinator and giving them back
			// (claim.go), on the agent's own subjects only: the coordinator
			// knows who asks, and so who holds what.
			SubjectClaim + "." + agent,
			SubjectGiveBack + "." + agent + ".>",

			// Outcomes, on the agent's own subject only.
			SubjectResults + "." + agent + ".>",
			// The API tunnel (tunnel.go): requests on the agent's own
			// subject only; the coordinator answers on its inbox.
			SubjectAPI + "." + agent + ".>",

			// The heartbeat: a KV put is a JetStream publish on
			// $KV.<bucket>.<key>; the agent's key is its name. The agent
			// publishes directly rather than binding the bucket, so it needs
			// no STREAM.INFO on it.
			"$KV." + BucketAgents + "." + agent,

			// Reading base bundles (ObjectStore.Get on zerg_bundles).
			//   js.ObjectStore() binds with STREAM.INFO.
			"$JS.API.STREAM.INFO." + bundles,
			//   GetInfo reads the object's meta message with a direct get
			//   of the last message on $O.<bucket>.M.<name> (object
			//   stores are created with AllowDirect).
			"$JS.API.DIRECT.GET." + bundles + ".>",
			//   The chunks arrive through an ordered ephemeral push
			//   consumer filtered on $O.<bucket>.C.<nuid>.
			"$JS.API.CONSUMER.CREATE." + bundles + ".>",
			//   ...which the client deletes when the object is read
			//   (without this, each read left a consumer behind).
			"$JS.API.CONSUMER.DELETE." + bundles + ".>",
			//   Flow-control replies of that consumer ($JS.FC.<stream>.>);
			//   without them a read of more than 2 MiB stalls.
			"$JS.FC." + bundles + ".>",

			// Putting result bundles into the agent's own bucket
			// (ObjectStore.Put on zerg_results_<agent>).
			//   bind, as above.
			"$JS.API.STREAM.INFO." + results,
			//   Put first looks up an existing object of that name.
			"$JS.API.DIRECT.GET." + results + ".>",
			//   Chunks ($O.<bucket>.C.<nuid>) and the meta message
			//   ($O.<bucket>.M.<name>).
			"$O." + ResultsBucket(agent) + ".>",
			// Not STREAM.PURGE: Put only purges when it replaces an
			// existing object or cleans up after a failed upload, and it
			// ignores that purge's error. A purge request carries its
			// subject filter in the body, so allowing it would allow
			// emptying the whole bucket. Result names are unique per
			// lease, so nothing is replaced.
		}},
		Subscribe: &server.SubjectPermission{Allow: []string{
			// Replies: API responses, claimed attempts, give-back answers,
			// publish acks and object chunks all arrive on the
			// connection's inbox, which Connect sets to _INBOX_<user>.
			inboxPrefix(agent) + ".>",
		}},
	}
}
