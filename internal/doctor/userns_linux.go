package doctor

import (
	"os"
	"os/exec"
	"strings"
	"syscall"
)

// ProbeUserNS starts `true` in a new user namespace: the only reliable test
// (sysctls differ between distributions and containers forbid it anyway).
func ProbeUserNS() UserNSCheck {
	tr, err := exec.LookPath("true")
	if err != nil {
		return UserNSCheck{Detail: "no `true` binary to probe with"}
	}
	cmd := exec.Command(tr)
	cmd.SysProcAttr = &syscall.SysProcAttr{
		Cloneflags:  syscall.CLONE_NEWUSER,
		UidMappings: []syscall.SysProcIDMap{{ContainerID: 0, HostID: os.Getuid(), Size: 1}},
		GidMappings: []syscall.SysProcIDMap{{ContainerID: 0, HostID: os.Getgid(), Size: 1}},
	}
	detail := ""
	if data, err := os.ReadFile("/proc/sys/user/max_user_namespaces"); err == nil {
		detail = "max_user_namespaces=" + strings.TrimSpace(string(data))
	}
	if err := cmd.Run(); err != nil {
		return UserNSCheck{Detail: strings.TrimSpace(err.Error() + " " + detail)}
	}
	return UserNSCheck{Available: true, Detail: detail}
}
