package main

import (
	"fmt"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/agnx-lite/agnx-lite/lite/httpapi"
	"github.com/agnx-lite/agnx-lite/runtime"
)

// treeRow is one line of the session tree: a session, how deep under its
// top-level ancestor it sits, and, for a child whose parent is not in the
// list (deleted, or filtered out), that parent's id.
type treeRow struct {
	runtime.SessionInfo
	depth    int
	orphanOf string
}

// sessionTree orders list (most recent first) as a tree: each top-level
// session followed by its children, theirs under them, each level in the
// list's order. A child whose parent is missing is shown at the top level
// with orphanOf set; so is any session of a parent loop (which no spawn
// makes, but a damaged log could), so every session appears exactly once.
func sessionTree(list []runtime.SessionInfo) []treeRow {
	listed := make(map[string]bool, len(list))
	for _, s := range list {
		listed[s.ID] = true
	}
	children := map[string][]runtime.SessionInfo{}
	for _, s := range list {
		if s.Parent != "" && s.Parent != s.ID && listed[s.Parent] {
			children[s.Parent] = append(children[s.Parent], s)
		}
	}
	out := make([]treeRow, 0, len(list))
	done := make(map[string]bool, len(list))
	var add func(s runtime.SessionInfo, depth int, orphanOf string)
	add = func(s runtime.SessionInfo, depth int, orphanOf string) {
		done[s.ID] = true
		out = append(out, treeRow{SessionInfo: s, depth: depth, orphanOf: orphanOf})
		for _, c := range children[s.ID] {
			if !done[c.ID] {
				add(c, depth+1, "")
			}
		}
	}
	for _, s := range list {
		if !done[s.ID] && (s.Parent == "" || !listed[s.Parent]) {
			add(s, 0, s.Parent)
		}
	}
	for _, s := range list { // parent loops: nothing above reached them
		if !done[s.ID] {
			add(s, 0, s.Parent)
		}
	}
	return out
}

// printSessions prints sessions as a tree, most recent first, children
// indented under their parent; with asJSON, the API's flat list, each
// child with its parent_id.
func printSessions(g *globals, list []runtime.SessionInfo, asJSON bool) error {
	if asJSON {
		out := make([]any, 0, len(list))
		for _, s := range list {
			out = append(out, httpapi.SessionJSON(s))
		}
		return printJSON(g.stdout, map[string]any{"sessions": out})
	}
	if len(list) == 0 {
		fmt.Fprintln(g.stdout, "no sessions yet: start one with \"agnx-lite chat\"")
		return nil
	}
	w := tabwriter.NewWriter(g.stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(w, "ID\tAGENT\tGATEWAY\tSTATUS\tTURNS\tUPDATED\tFIRST MESSAGE")
	for _, s := range sessionTree(list) {
		id := s.ID
		if s.depth > 0 {
			id = strings.Repeat("  ", s.depth-1) + "└─ " + id
		}
		preview := oneLine(s.Preview)
		if s.orphanOf != "" {
			preview = "(child of " + s.orphanOf + ") " + preview
		}
		fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%d\t%s\t%s\n", id, s.Agent, s.Gateway, s.Status, s.Turns,
			s.Updated.Local().Format(time.DateTime), strings.TrimSpace(preview))
	}
	return w.Flush()
}
