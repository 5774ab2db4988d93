// Package slurmtest starts a throwaway single-node Slurm cluster on
// loopback for tests: a private munge daemon (its own key and socket under
// a temporary directory), slurmctld and slurmd with a slurm.conf reached
// through SLURM_CONF, no systemd and nothing under /etc. It starts in about
// a second and is always torn down: every job is cancelled and every
// daemon stopped when the test ends.
//
// Tests skip, saying why, where the Slurm and munge binaries are absent
// (Debian: apt-get install slurmctld slurmd munge slurm-client), unless
// REPRO_REQUIRE_SLURM=1 (CI), which makes that a failure.
package slurmtest

import (
	"bytes"
	"crypto/rand"
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// Binaries the cluster needs.
var Binaries = []string{"munged", "slurmctld", "slurmd", "sbatch", "squeue", "scancel", "scontrol", "sinfo"}

// Cluster is a running test cluster.
type Cluster struct {
	Dir  string // everything it writes
	Conf string // its slurm.conf (SLURM_CONF)
	// CPUs and GPUs the node offers (GPUs: 0 where fake GPU devices could
	// not be made, which needs root).
	CPUs, GPUs int
	Node       string

	t     testing.TB
	procs []*exec.Cmd
}

// Available reports whether the binaries are installed, and if not which
// one is missing.
func Available() (bool, string) {
	for _, b := range Binaries {
		if _, err := exec.LookPath(b); err != nil {
			if _, err := os.Stat(filepath.Join("/usr/sbin", b)); err != nil {
				return false, b
			}
		}
	}
	return true, ""
}

func lookPath(b string) string {
	if p, err := exec.LookPath(b); err == nil {
		return p
	}
	return filepath.Join("/usr/sbin", b)
}

// Start starts a cluster for t and sets SLURM_CONF for the rest of the
// test (t.Setenv), so sbatch and squeue in this process and its children
// reach it. It skips the test where Slurm is not installed.
func Start(t testing.TB) *Cluster {
	t.Helper()
	if ok, missing := Available(); !ok {
		msg := fmt.Sprintf("no Slurm here (%s not found): the Slurm tests need Debian's slurmctld, slurmd, munge and slurm-client packages", missing)
		if os.Getenv("REPRO_REQUIRE_SLURM") == "1" {
			t.Fatal(msg + " (REPRO_REQUIRE_SLURM=1)")
		}
		t.Skip(msg)
	}
	// munged insists that every directory above its socket be searchable
	// by all and writable by none but its owner: a directory of our own,
	// not t.TempDir (0700).
	dir, err := os.MkdirTemp("", "repro-slurm-")
	if err != nil {
		t.Fatal(err)
	}
	c := &Cluster{Dir: dir, Conf: filepath.Join(dir, "slurm.conf"), CPUs: 8, Node: "repronode", t: t}
	t.Cleanup(c.stop)
	for _, d := range []string{"munge", "state", "spool", "log"} {
		if err := os.MkdirAll(filepath.Join(dir, d), 0o711); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Chmod(dir, 0o711); err != nil {
		t.Fatal(err)
	}
	keyDir := filepath.Join(dir, "key")
	if err := os.Mkdir(keyDir, 0o700); err != nil {
		t.Fatal(err)
	}
	key := make([]byte, 1024)
	rand.Read(key)
	keyFile := filepath.Join(keyDir, "munge.key")
	if err := os.WriteFile(keyFile, key, 0o400); err != nil {
		t.Fatal(err)
	}
	sock := filepath.Join(dir, "munge", "munge.sock")
	c.spawn("munged", "--foreground", "--key-file="+keyFile, "--socket="+sock,
		"--pid-file="+filepath.Join(dir, "munge", "munged.pid"), "--log-file="+filepath.Join(dir, "log", "munged.log"),
		"--seed-file="+filepath.Join(dir, "munge", "seed"), "--force")
	waitFor(t, 10*time.Second, func() bool { _, err := os.Stat(sock); return err == nil }, "munged's socket", c)

	// Fake GPUs: gres needs device files; /dev/null's numbers will do.
	gres := ""
	if os.Geteuid() == 0 {
		ok := true
		for i := 0; i < 2; i++ {
			if err := syscall.Mknod(filepath.Join(dir, fmt.Sprintf("gpu%d", i)), syscall.S_IFCHR|0o666, 1<<8|3); err != nil {
				ok = false
			}
		}
		if ok {
			c.GPUs = 2
			gres = " Gres=gpu:2"
			conf := fmt.Sprintf("AutoDetect=off\nNodeName=%s Name=gpu File=%s\n", c.Node, filepath.Join(dir, "gpu[0-1]"))
			if err := os.WriteFile(filepath.Join(dir, "gres.conf"), []byte(conf), 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	u, err := user.Current()
	if err != nil {
		t.Fatal(err)
	}
	host, _ := os.Hostname()
	ctld, d := freePort(t), freePort(t)
	conf := fmt.Sprintf(`ClusterName=reprotest
SlurmctldHost=localhost
SlurmctldPort=%d
SlurmdPort=%d
SlurmUser=%s
SlurmdUser=%s
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=%s
StateSaveLocation=%s
SlurmdSpoolDir=%s
SlurmctldPidFile=%s
SlurmdPidFile=%s
SlurmctldLogFile=%s
SlurmdLogFile=%s
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
SchedulerType=sched/builtin
SchedulerParameters=batch_sched_delay=0
MpiDefault=none
ReturnToService=2
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
SlurmdParameters=config_overrides
GresTypes=gpu
MinJobAge=600
KillWait=3
InactiveLimit=0
NodeName=%s NodeHostname=%s NodeAddr=127.0.0.1 CPUs=%d RealMemory=8000%s State=UNKNOWN
PartitionName=debug Nodes=%s Default=YES MaxTime=INFINITE State=UP
PartitionName=other Nodes=%s MaxTime=INFINITE State=UP
`, ctld, d, u.Username, u.Username, sock,
		filepath.Join(dir, "state"), filepath.Join(dir, "spool"),
		filepath.Join(dir, "slurmctld.pid"), filepath.Join(dir, "slurmd.pid"),
		filepath.Join(dir, "log", "slurmctld.log"), filepath.Join(dir, "log", "slurmd.log"),
		c.Node, host, c.CPUs, gres, c.Node, c.Node)
	if err := os.WriteFile(c.Conf, []byte(conf), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Setenv("SLURM_CONF", c.Conf)
	c.spawn("slurmctld", "-D", "-f", c.Conf)
	c.spawn("slurmd", "-D", "-N", c.Node, "-f", c.Conf)
	waitFor(t, 30*time.Second, func() bool {
		out, err := exec.Command(lookPath("sinfo"), "--noheader", "--format=%T").Output()
		return err == nil && strings.Contains(string(out), "idle")
	}, "the node to come up idle", c)
	return c
}

// spawn starts a daemon in the foreground as a child in its own process
// group, its output in log/<name>.out.
func (c *Cluster) spawn(name string, args ...string) {
	cmd := exec.Command(lookPath(name), args...)
	cmd.Env = append(os.Environ(), "SLURM_CONF="+c.Conf)
	out, err := os.Create(filepath.Join(c.Dir, "log", name+".out"))
	if err != nil {
		c.t.Fatal(err)
	}
	cmd.Stdout, cmd.Stderr = out, out
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		c.t.Fatalf("starting %s: %v", name, err)
	}
	out.Close()
	c.procs = append(c.procs, cmd)
}

func waitFor(t testing.TB, limit time.Duration, ok func() bool, what string, c *Cluster) {
	t.Helper()
	deadline := time.Now().Add(limit)
	for !ok() {
		if time.Now().After(deadline) {
			t.Fatalf("slurm test cluster: timed out waiting for %s\n%s", what, c.Logs())
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func freePort(t testing.TB) int {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// Logs returns the tail of the daemons' logs, for failure messages.
func (c *Cluster) Logs() string {
	var b bytes.Buffer
	files, _ := filepath.Glob(filepath.Join(c.Dir, "log", "*"))
	for _, f := range files {
		data, _ := os.ReadFile(f)
		lines := strings.Split(strings.TrimRight(string(data), "\n"), "\n")
		if len(lines) > 15 {
			lines = lines[len(lines)-15:]
		}
		fmt.Fprintf(&b, "== %s\n%s\n", f, strings.Join(lines, "\n"))
	}
	return b.String()
}

// Jobs lists the cluster's jobs (array tasks one per line) as
// "ID|NAME|STATE|REASON|COMMENT" lines.
func (c *Cluster) Jobs() []string {
	out, err := exec.Command(lookPath("squeue"), "--noheader", "--states=all", "--array",
		"--Format=JobArrayID:|,Name:|,State:|,Reason:|,Comment:").Output()
	if err != nil {
		c.t.Fatalf("squeue: %v", err)
	}
	var jobs []string
	for _, l := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		if l = strings.TrimSpace(l); l != "" {
			jobs = append(jobs, l)
		}
	}
	return jobs
}

// WaitJob waits up to limit until the cluster shows a job (or array task)
// named name in state, and returns its ID. Slurm tells a job's state only
// through squeue, so this asks it every 50 ms; the error lists the jobs.
func (c *Cluster) WaitJob(name, state string, limit time.Duration) (string, error) {
	deadline := time.Now().Add(limit)
	for {
		for _, j := range c.Jobs() {
			if f := strings.Split(j, "|"); f[1] == name && f[2] == state {
				return f[0], nil
			}
		}
		if time.Now().After(deadline) {
			return "", fmt.Errorf("no %s job named %s after %s; jobs:\n%s", state, name, limit, strings.Join(c.Jobs(), "\n"))
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// stop cancels every job, waits for them to end, stops the daemons and
// removes the directory.
func (c *Cluster) stop() {
	if len(c.procs) >= 3 {
		exec.Command(lookPath("scancel"), "--user="+currentUser(), "--full").Run()
		deadline := time.Now().Add(15 * time.Second)
		for time.Now().Before(deadline) {
			out, err := exec.Command(lookPath("squeue"), "--noheader", "--states=RUNNING,COMPLETING,PENDING,CONFIGURING", "--format=%i").Output()
			if err != nil || strings.TrimSpace(string(out)) == "" {
				break
			}
			time.Sleep(100 * time.Millisecond)
		}
	}
	// A job's slurmstepd may outlive its job for a moment (reporting, clean
	// up); stopping slurmd under it leaves it waiting forever. Wait for the
	// steps' sockets in the spool directory to go.
	for deadline := time.Now().Add(15 * time.Second); time.Now().Before(deadline) && len(c.steps()) > 0; {
		time.Sleep(100 * time.Millisecond)
	}
	for i := len(c.procs) - 1; i >= 0; i-- {
		p := c.procs[i]
		p.Process.Signal(syscall.SIGTERM)
		done := make(chan struct{})
		go func() { p.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			syscall.Kill(-p.Process.Pid, syscall.SIGKILL)
			<-done
		}
	}
	// Any step daemon of this cluster still there is killed by its PID (it
	// carries this cluster's SLURM_CONF in its environment).
	for _, pid := range c.stepDaemons() {
		syscall.Kill(pid, syscall.SIGKILL)
	}
	if c.t.Failed() && os.Getenv("REPRO_SLURMTEST_KEEP") != "" {
		c.t.Logf("slurm test cluster kept in %s", c.Dir)
		return
	}
	os.RemoveAll(c.Dir)
}

func currentUser() string {
	if u, err := user.Current(); err == nil {
		return u.Username
	}
	return fmt.Sprint(os.Getuid())
}

// steps lists the step daemons' sockets in the spool directory
// (NODE_JOBID.STEPID).
func (c *Cluster) steps() []string {
	ents, _ := os.ReadDir(filepath.Join(c.Dir, "spool"))
	var out []string
	for _, e := range ents {
		if e.Type()&os.ModeSocket != 0 && strings.HasPrefix(e.Name(), c.Node+"_") {
			out = append(out, e.Name())
		}
	}
	return out
}

// stepDaemons finds the PIDs of slurmstepd processes of this cluster: their
// environment holds its SLURM_CONF.
func (c *Cluster) stepDaemons() []int {
	procs, _ := filepath.Glob("/proc/[0-9]*")
	want := []byte("SLURM_CONF=" + c.Conf + "\x00")
	var pids []int
	for _, p := range procs {
		cmd, err := os.ReadFile(filepath.Join(p, "cmdline"))
		if err != nil || !bytes.HasPrefix(cmd, []byte("slurmstepd")) {
			continue
		}
		env, err := os.ReadFile(filepath.Join(p, "environ"))
		if err != nil || !bytes.Contains(env, want) {
			continue
		}
		var pid int
		if _, err := fmt.Sscanf(filepath.Base(p), "%d", &pid); err == nil {
			pids = append(pids, pid)
		}
	}
	return pids
}
