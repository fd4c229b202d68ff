// Package memory is an agent's memory bank: Agnx's plain-Markdown files
// (memory/MEMORY.md and memory/daily/YYYY-MM-DD.md in the agent's folder,
// world memory shared by every agent under the data dir), the memory tool
// the model uses (recall, remember, reflect, update_world), the memory
// directive of the system prompt, and the search index over those files
// and the agent's past sessions: keyword (BM25) always, plus vectors from
// the provider's embeddings endpoint when the agent names an embedding
// model. The index lives in bbolt (storage) and is updated incrementally;
// the files stay the truth a person can read and edit. A search made by a
// conversation (Query.Viewer) finds the messages of only the past
// sessions that conversation may read (runtime.Viewer); the files are the
// agent's, every conversation's.
package memory
