// Package dashboard serves zerg dashboard: a local web page of a
// repository's runs, live over server-sent events. Its only source is each
// run's event log and attempt records, read without locking (as zerg
// status reads them): the coordinator never waits on it. Every request
// carries the token printed with the URL; assets are embedded (no network,
// no CDN).
package dashboard
