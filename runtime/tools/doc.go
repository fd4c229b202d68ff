// Package tools holds agnx-lite's built-in tools. Each tool decodes its
// arguments into its own struct, whose JSON Schema sits beside it, and
// reports failures the model should see as error Results, not Go errors.
//
// File tools work inside the agent's workspace through os.Root, so no path
// (.., absolute, or a symlink, even one swapped in mid-call) reaches
// outside it. The path a tool opens is also the subject policies match
// (cleanPath): ./x, a/../x, /workspace/x and the workspace's host path
// all name x. write_file and edit_file refuse a regular file with other
// hard links (checked on the open descriptor, before truncating): a link
// made on the host may name a file outside, which os.Root cannot see.
//
// A call may work in another folder than its agent's workspace: a
// subagent given its parent's workspace (runtime.CallInfo's Workspace and
// ReadOnly). WorkspaceFor is the one place tools read that override; the
// file tools open the override folder instead, with the same rules, and
// write_file and edit_file answer a read-only call with ReadOnlyRefusal.
// The subject policies match stays the path relative to the folder.
//
// Workspace files are hostile input, so no file tool can hang or exhaust
// the daemon:
//   - Only regular files are read or written. Files are opened with
//     O_NONBLOCK and checked on the open descriptor (fstat), folders with
//     O_DIRECTORY, so a named pipe, device or socket, even one swapped in
//     between a check and the open, is refused without blocking.
//   - Memory is bounded whatever the file's size. read_file streams to
//     the window asked for (offset, limit) and returns at most 256 KiB
//     (maxReadBytes), saying which offset to go on from. edit_file refuses
//     a file over 4 MiB (maxWriteBytes) from its size, and a replacement
//     whose result would exceed 4 MiB from the count of matches, before
//     building it; write_file takes at most 4 MiB. grep streams each file
//     line by line, matching the first 64 KiB of a line, and reads at most
//     256 MiB per call; glob and grep look at most at 100,000 folder
//     entries and go at most 64 folders deep; list_dir holds at most 500
//     names of a folder of any size.
//   - Long reads check the call's context, so a cancelled call ends.
//
// The Agnx tools keep Agnx's names, argument schemas and result texts:
// bash (bash -c in the sandbox, 120 s; stdout, "\n--- stderr ---\n" and
// stderr, or "Command completed with exit code N"; 256 KiB), CLI tools
// ({args: string}, split into words by SplitArgs and run WITHOUT a shell,
// so args never becomes shell code), web (search through Brave or
// SearXNG, fetch with the SSRF checks above), session (list, read) and
// reload_tools.
//
// skill is lite's own: it reads an agent's skills (SKILL.md and the list
// of the skill's files, or one file of the skill) through an os.Root on
// the skill's folder, with the file tools' rules (regular files only,
// opened without blocking; 256 KiB; no "..", absolute path or link out).
//
// tools imports runtime (for the Tool interface) and the standard library.
package tools
