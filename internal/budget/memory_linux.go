package budget

import "syscall"

// physical returns the machine's total RAM from sysinfo(2).
func physical() (int64, bool) {
	var si syscall.Sysinfo_t
	if err := syscall.Sysinfo(&si); err != nil || si.Totalram == 0 {
		return 0, false
	}
	unit := uint64(max(si.Unit, 1))
	return int64(min(uint64(si.Totalram)*unit, 1<<62)), true
}
