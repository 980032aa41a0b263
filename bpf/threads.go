package bpf

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
)

// threads returns the thread ids of process pid, from root/PID/task
// (root is normally /proc), in ascending order.
func threads(root string, pid int) ([]int, error) {
	dir := filepath.Join(root, strconv.Itoa(pid), "task")
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("threads of process %d: %w", pid, err)
	}
	var tids []int
	for _, e := range ents {
		tid, err := strconv.Atoi(e.Name())
		if err != nil || tid <= 0 {
			continue // not a thread
		}
		tids = append(tids, tid)
	}
	if len(tids) == 0 {
		return nil, fmt.Errorf("threads of process %d: %s lists none", pid, dir)
	}
	slices.Sort(tids)
	return tids, nil
}
