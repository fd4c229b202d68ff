// Package tools holds agnx-lite's built-in tools. Each tool decodes its
// arguments into its own struct, whose JSON Schema sits beside it, and
// reports failures the model should see as error Results, not Go errors.
//
// File tools work inside the agent's workspace through os.Root, so no path
// (.., absolute, or a symlink, even one swapped in mid-call) reaches
// outside it.
//
// tools imports runtime (for the Tool interface) and the standard library.
package tools
