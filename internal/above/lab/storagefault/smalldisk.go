// Package storagefault puts stores on storage that fails — a small
// filesystem that fills up, write errors at the durability boundaries,
// torn and flipped bytes in the store's files — and checks that nothing
// acknowledged is lost and no damage goes unreported: the storage fault
// campaign beside the crash campaign (`make storage`).
package storagefault

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"strconv"
	"syscall"

	"github.com/hikoutei/hikoutei-go/internal/config"
)

// Medium is how a process gets a small filesystem.
type Medium string

// Media: a real tmpfs mounted in a private mount namespace (writes past
// its size fail with ENOSPC, like a full disk), or, where mounting is not
// allowed, a per-process file size limit (RLIMIT_FSIZE: writes past it
// fail with EFBIG).
const (
	MediumTmpfs    Medium = "tmpfs"
	MediumFileSize Medium = "rlimit_fsize"
)

// mediumEnv tells a child which medium its parent could give it.
const mediumEnv = config.EnvStorageMedium

// StartIsolated starts cmd in a private mount namespace (a new user
// namespace too when that is what the kernel allows), so the child can
// mount a tmpfs that nobody else sees and that disappears with it. Where
// neither is allowed it starts cmd plainly and the child falls back to
// MediumFileSize. It returns the medium the child will use.
func StartIsolated(cmd *exec.Cmd) (Medium, error) {
	attempts := []*syscall.SysProcAttr{
		{Cloneflags: syscall.CLONE_NEWNS},
		{Cloneflags: syscall.CLONE_NEWNS | syscall.CLONE_NEWUSER,
			UidMappings: []syscall.SysProcIDMap{{ContainerID: 0, HostID: os.Getuid(), Size: 1}},
			GidMappings: []syscall.SysProcIDMap{{ContainerID: 0, HostID: os.Getgid(), Size: 1}}},
	}
	base := cmd.Env
	if base == nil {
		base = os.Environ()
	}
	for _, attr := range attempts {
		c := *cmd
		c.SysProcAttr, c.Env = attr, append(base, mediumEnv+"="+string(MediumTmpfs))
		if err := c.Start(); err == nil {
			*cmd = c
			return MediumTmpfs, nil
		} else if !errors.Is(err, syscall.EPERM) && !errors.Is(err, syscall.EINVAL) && !errors.Is(err, syscall.ENOSPC) {
			return "", err
		}
	}
	cmd.Env = append(base, mediumEnv+"="+string(MediumFileSize))
	return MediumFileSize, cmd.Start()
}

// SmallDisk is a directory whose writes fail past a size: see Medium.
type SmallDisk struct {
	Dir    string
	Medium Medium
}

// NewSmallDisk makes dir (existing, empty) a filesystem of size bytes, with
// the medium the parent's StartIsolated chose (tmpfs when run directly).
func NewSmallDisk(dir string, size int64) (*SmallDisk, error) {
	d := &SmallDisk{Dir: dir, Medium: Medium(config.StorageMedium())}
	if d.Medium == "" {
		d.Medium = MediumTmpfs
	}
	if d.Medium == MediumFileSize {
		signal.Ignore(syscall.SIGXFSZ) // EFBIG instead of the signal's default kill
		return d, setFileSizeLimit(size)
	}
	if err := syscall.Mount("tmpfs", dir, "tmpfs", syscall.MS_NOSUID|syscall.MS_NODEV, "size="+strconv.FormatInt(size, 10)+",mode=0700"); err != nil {
		return nil, fmt.Errorf("mount a %d-byte tmpfs: %w", size, err)
	}
	return d, nil
}

// Grow gives the filesystem size bytes (an operator freeing space or
// growing the volume); the files stay as they are.
func (d *SmallDisk) Grow(size int64) error {
	if d.Medium == MediumFileSize {
		return setFileSizeLimit(size)
	}
	return syscall.Mount("tmpfs", d.Dir, "tmpfs", syscall.MS_REMOUNT|syscall.MS_NOSUID|syscall.MS_NODEV, "size="+strconv.FormatInt(size, 10))
}

// Unmount removes the tmpfs (nothing for MediumFileSize).
func (d *SmallDisk) Unmount() error {
	if d.Medium == MediumFileSize {
		return nil
	}
	return syscall.Unmount(d.Dir, 0)
}

func setFileSizeLimit(size int64) error {
	var lim syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_FSIZE, &lim); err != nil {
		return err
	}
	lim.Cur = min(uint64(size), lim.Max)
	return syscall.Setrlimit(syscall.RLIMIT_FSIZE, &lim)
}
