// Package doctor checks what zerg needs on this machine (zerg doctor): the
// tools, user namespaces, whether a sandbox or a container of the project's
// image starts, the cgroups sandboxed attempts get, and from those checks
// which modes can run here. The command prints the Report; the checks and
// the verdicts on them are here, where they are tested without cobra.
package doctor
