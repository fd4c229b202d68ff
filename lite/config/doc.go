// Package config is agnx.yaml as plain data: the yaml-tagged structs that
// decode it (Config and one type per section), their defaults (Default,
// and DefaultYAML, the commented file init writes), ${VAR} expansion and
// agnx.env (ReadEnvFile), secrets that never print (Secret), validation
// whose errors say file:line (Validate), where the file and the data dir
// are found (Locate) and what lives there (DBPath, WorkspaceDir, TasksDir,
// WorldMemoryDir; Init writes agnx.yaml and the default agent; serve.json
// is the file through which the CLI finds a running daemon: ReadDaemon).
// Parse and Load keep paths as written; Locate resolves them against the
// config file's folder.
//
// Every subsystem reads it, so it sits low. It imports the standard
// library, agents (YAML with line numbers, names, the agent template),
// runtime with its sched and memory packages (for their types and
// bounds), bwrap (the network helpers' names, the sandbox user), and
// three leaves of lite: workers (the workers: entries and their checks),
// webaddr (the HTTP server's host, origin and proxy forms) and hooks/tmpl
// (a webhook's template language). It never imports the root package
// lite or another of its subsystems; lite/layering_test.go holds it to
// that.
package config
