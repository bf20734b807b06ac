// Package proc is the one owner of the processes zerg starts: it starts a
// command in its own process group (and cgroup, where it has one), tracks
// the command's process tree, signals it (SIGTERM, a grace, SIGKILL) and
// reaps it. Every signal zerg sends goes through this package, so there is
// one place that decides what may be signalled: a process is signalled only
// when it is identified by its PID and start time (ID) and the PID still
// names that process, checked through a pidfd, so a PID the kernel has
// since given to another process is never signalled. docs/processes.md
// says how a tree's processes are found.
package proc
