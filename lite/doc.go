// Package lite is agnx-lite's composition root, and only that: given the
// configuration lite/config reads, Open opens the store and builds the
// subsystems in an order where each exists before it is handed on (the
// notification worker, the loop, the schedules, task boards and
// heartbeats, the tool factory, the agent cache, retention and the
// memory guard), satisfies the small interfaces they declare with
// adapters of its own, and keeps the one ordered list of services that
// runs in the background (services.go). Serve adds the gateways with
// their deliver and follow fan-out, the HTTP server, ready, the timers
// and the watchdog to that list; Close stops it in reverse. The turn-end
// fan-out and the metrics live here too.
//
// Only cmd imports lite; the packages under lite/ import one another only
// downward, in the layers lite/layering_test.go lists and
// docs/internals/architecture.md draws.
package lite
