package hostfacts

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// Throttle is a Raspberry Pi's throttling word, as its firmware gives it
// (vcgencmd get_throttled): the low bits say what holds now, the same
// bits 16 places up what happened since boot.
type Throttle uint32

// The conditions, each a bit of the low half.
const (
	// UnderVoltage: the supply gives less than the board needs (about
	// 4.63 V): it may crash or corrupt its SD card. The power supply is
	// too weak, or its cable too thin.
	UnderVoltage Throttle = 1 << 0
	// FreqCapped: the ARM cores' frequency is capped (under-voltage or heat).
	FreqCapped Throttle = 1 << 1
	// Throttled: the cores run slower than asked, now.
	Throttled Throttle = 1 << 2
	// SoftTempLimit: the board's soft temperature limit is reached and
	// its clock lowered.
	SoftTempLimit Throttle = 1 << 3

	conditions = UnderVoltage | FreqCapped | Throttled | SoftTempLimit
	sinceBoot  = 16
)

// Now is the conditions that hold now.
func (t Throttle) Now() Throttle { return t & conditions }

// SinceBoot is the conditions that held at some time since boot (now
// included).
func (t Throttle) SinceBoot() Throttle { return t >> sinceBoot & conditions }

// Names are the conditions set in t's low bits, in bit order, as
// snake_case words (a Prometheus label, a JSON list).
func (t Throttle) Names() []string {
	out := []string{}
	for _, c := range Conditions {
		if t&c.Bit != 0 {
			out = append(out, c.Name)
		}
	}
	return out
}

// Conditions names each condition, in bit order.
var Conditions = [...]struct {
	Bit  Throttle
	Name string
}{
	{UnderVoltage, "under_voltage"},
	{FreqCapped, "frequency_capped"},
	{Throttled, "throttled"},
	{SoftTempLimit, "soft_temperature_limit"},
}

// throttlePaths are where a Raspberry Pi's firmware driver puts its
// get_throttled attribute: under soc on the Pi 1-4, under a soc node
// with a unit address on later boards.
var throttlePaths = [...]string{
	"devices/platform/soc/soc:firmware/get_throttled",
	"devices/platform/soc@*/*:firmware/get_throttled",
}

// Throttle reads a Raspberry Pi's throttling word, and false on any other
// machine. A direct read: gopsutil knows nothing of the Pi's firmware.
// The attribute (the kernel prints it in hex) is the firmware's answer
// that the kernel's hwmon driver polls every 2 s; the alternative,
// `vcgencmd get_throttled`, is a process to start. Recent kernels log a
// one-time warning ("deprecated, use hwmon sysfs instead") at the first
// read after boot, but their hwmon attribute (in0_lcrit_alarm) tells
// only under-voltage, not throttling.
func (r *Reader) Throttle() (Throttle, bool) {
	for _, p := range throttlePaths {
		matches, _ := filepath.Glob(r.sys(p))
		for _, m := range matches {
			data, err := os.ReadFile(m)
			if err != nil {
				continue
			}
			v, err := strconv.ParseUint(strings.TrimPrefix(strings.TrimSpace(string(data)), "0x"), 16, 32)
			if err != nil {
				continue
			}
			return Throttle(v), true
		}
	}
	return 0, false
}
