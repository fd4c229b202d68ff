package doctor

import (
	"bufio"
	"context"
	"fmt"
	"net/http"
	"os/exec"
	"strconv"
	"strings"
	"time"

	"github.com/agnx-lite/agnx-lite/lite/config"
	"github.com/agnx-lite/agnx-lite/runtime/hostfacts"
)

// hostChecks are the machine's side of doctor: the daemon, Telegram, the
// host facts (memory, disk, load, temperature, throttling) and the
// systemd unit.
func hostChecks(ctx context.Context, cfg *config.Config) []Check {
	host := new(hostfacts.Reader)
	out := []Check{daemonCheck(cfg, host), telegramCheck(ctx, cfg)}
	out = append(out, factChecks(cfg, host.Read(ctx, cfg.DataDir), true)...)
	return append(out, serviceCheck(ctx))
}

func daemonCheck(cfg *config.Config, host *hostfacts.Reader) Check {
	d := config.ReadDaemon(cfg)
	if d == nil {
		return ok("daemon", "not running (start it with agnx-lite serve, or install it: agnx-lite service install)")
	}
	detail := fmt.Sprintf("running, pid %d, %s, up %s", d.PID, d.URL, time.Since(d.Started).Round(time.Second))
	if m, err := host.Process(d.PID); err == nil {
		detail += fmt.Sprintf(", RSS %.1f MiB", float64(m.RSS)/(1<<20))
	}
	return ok("daemon", detail)
}

// serviceCheck asks systemd about the unit, system-wide then per user.
func serviceCheck(ctx context.Context) Check {
	if _, err := exec.LookPath("systemctl"); err != nil {
		return ok("service", "systemd not found: agnx-lite runs when you start it")
	}
	for _, scope := range [][]string{nil, {"--user"}} {
		ctx, cancel := context.WithTimeout(ctx, 3*time.Second)
		args := append(append([]string{}, scope...), "is-active", "agnx-lite.service")
		out, _ := exec.CommandContext(ctx, "systemctl", args...).Output()
		cancel()
		state := strings.TrimSpace(string(out))
		where := "system"
		if scope != nil {
			where = "user"
		}
		switch state {
		case "active":
			return ok("service", "agnx-lite.service is active ("+where+")")
		case "failed", "activating", "deactivating":
			return Check{Name: "service", Status: "warn", Detail: "agnx-lite.service is " + state + " (" + where + ")",
				Fix: "see why: journalctl -u agnx-lite -n 50"}
		}
	}
	return ok("service", "not installed as a systemd service (agnx-lite service install does it)")
}

// telegramCheck says whether the Telegram gateway is set up, and, with a
// daemon running, when it last polled (read from the daemon's /metrics).
func telegramCheck(ctx context.Context, cfg *config.Config) Check {
	tg := cfg.Gateways.Telegram
	switch {
	case !tg.Enabled:
		return ok("telegram", "disabled (gateways.telegram.enabled)")
	case tg.BotToken.Value() == "":
		return Check{Name: "telegram", Status: "fail", Detail: "enabled without a bot token",
			Fix: "set gateways.telegram.bot_token: ${TELEGRAM_BOT_TOKEN} and put the token in agnx.env"}
	case len(tg.Allowlist) == 0:
		return Check{Name: "telegram", Status: "warn", Detail: "no allowlist: the bot answers nobody",
			Fix: "message the bot: it tells you your id; add it to gateways.telegram.allowlist"}
	}
	d := config.ReadDaemon(cfg)
	if d == nil {
		return ok("telegram", fmt.Sprintf("set up for %d user(s); the daemon is not running", len(tg.Allowlist)))
	}
	last, err := lastPoll(ctx, d.URL, cfg.Server.APIToken.Value())
	switch {
	case err != nil:
		return Check{Name: "telegram", Status: "warn", Detail: "cannot read the daemon's metrics: " + err.Error()}
	case last.IsZero():
		return Check{Name: "telegram", Status: "warn", Detail: "no successful poll yet",
			Fix: "check the token and the network; journalctl -u agnx-lite says more"}
	case time.Since(last) > 3*time.Minute:
		return Check{Name: "telegram", Status: "warn", Detail: "last successful poll " + time.Since(last).Round(time.Second).String() + " ago",
			Fix: "check the network; the gateway retries by itself"}
	}
	return ok("telegram", "last successful poll "+time.Since(last).Round(time.Second).String()+" ago")
}

func lastPoll(ctx context.Context, base, token string) (time.Time, error) {
	ctx, cancel := context.WithTimeout(ctx, 3*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, base+"/metrics", nil)
	if err != nil {
		return time.Time{}, err
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return time.Time{}, err
	}
	defer resp.Body.Close()
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		if v, found := strings.CutPrefix(sc.Text(), "agnx_telegram_last_poll_timestamp_seconds "); found {
			f, err := strconv.ParseFloat(v, 64)
			if err != nil {
				return time.Time{}, err
			}
			return time.Unix(int64(f), 0), nil
		}
	}
	return time.Time{}, sc.Err()
}
