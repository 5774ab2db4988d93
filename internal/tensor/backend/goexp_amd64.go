package backend

import "golang.org/x/sys/cpu"

// goExpFMA is math's own test (internal/cpu: AVX, with the OS saving its
// registers, and FMA), through x/sys/cpu.
func goExpFMA() bool { return cpu.X86.HasAVX && cpu.X86.HasFMA }
