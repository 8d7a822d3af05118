package sim

import (
	"container/heap"
	"slices"
	"sort"
	"sync"
	"sync/atomic"
	"time"
)

// Conversation is one stored conversation record. Debug chat creates them
// today; outbound calls and SMS (a later issue) add theirs the same way:
// fill the exported identity fields, Store.Add, then AppendTurn and End.
//
// The exported fields never change after Add, so the store filters on them
// without locking the record; everything else is behind mu.
type Conversation struct {
	ID          string
	AccountID   string
	ProjectID   string
	VariantID   string
	VariantName string
	Environment string
	Channel     string
	FromNumber  string
	ToNumber    string
	StartedAt   time.Time

	mu           sync.Mutex
	inProgress   bool
	lastActivity time.Time
	turns        []Turn
	numSilences  int
	numOOD       int
	handoff      *HandoffRecord
	metrics      map[string]any
	state        map[string]any
	timedOut     bool
	ended        bool
	// terms caches the term frequencies of the transcript for semantic
	// search; termsTurns says for how many turns it was computed.
	terms      map[string]float64
	termsTurns int
	// store is set by Store.Add so that AppendTurn can call the store's
	// hooks; nil before Add (seeding builds turns first).
	store *Store
}

// Turn is one stored exchange. Times are kept as time.Time and rendered as
// ISO 8601 at the edge.
type Turn struct {
	UserInput       string
	UserInputDTMF   string
	UserInputAt     time.Time
	AgentResponse   string
	AgentResponseAt time.Time
	Latency         time.Duration
	Intents         []string
	Entities        []map[string]any
	IsOOD           bool
	IsSilence       bool
	BargeIn         bool
	// GenAI is the generative-AI metadata include_turn_metadata adds.
	GenAI map[string]any
	// FunctionErrors counts failed function events of the turn, kept for
	// the alert evaluator of a later issue.
	FunctionErrors int
}

// HandoffRecord is what the agent stored at handoff.
type HandoffRecord struct {
	Destination string
	Reason      string
	SharedID    string
	Data        map[string]any
}

// TurnUpdate carries what one turn changes besides appending the Turn.
type TurnUpdate struct {
	// State and Metrics replace the conversation's state and custom
	// metrics when non-nil (the agent reports them cumulatively).
	State   map[string]any
	Metrics map[string]any
	// Handoff is set on the turn the agent hands off.
	Handoff *HandoffRecord
}

// AppendTurn records a turn, then tells the store's hooks.
func (c *Conversation) AppendTurn(t Turn, u TurnUpdate) {
	st := c.appendTurn(t, u)
	if st == nil {
		return
	}
	if h := st.hooks.Load(); h != nil {
		if h.Turn != nil {
			h.Turn(c, t)
		}
		if u.Handoff != nil && h.Handoff != nil {
			h.Handoff(c, u.Handoff)
		}
	}
}

func (c *Conversation) appendTurn(t Turn, u TurnUpdate) *Store {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.turns = append(c.turns, t)
	if t.IsSilence {
		c.numSilences++
	}
	if t.IsOOD {
		c.numOOD++
	}
	if u.State != nil {
		c.state = u.State
	}
	if u.Metrics != nil {
		c.metrics = u.Metrics
	}
	if u.Handoff != nil {
		c.handoff = u.Handoff
	}
	if at := t.AgentResponseAt; at.After(c.lastActivity) {
		c.lastActivity = at
	}
	return c.store
}

// snapshot is a consistent copy of a conversation for rendering. Turns are
// append-only and never modified in place, so sharing the backing array
// with a longer live slice is safe.
type snapshot struct {
	inProgress   bool
	timedOut     bool
	lastActivity time.Time
	turns        []Turn
	numSilences  int
	numOOD       int
	handoff      *HandoffRecord
	metrics      map[string]any
	state        map[string]any
}

func (c *Conversation) snapshot() snapshot {
	c.mu.Lock()
	defer c.mu.Unlock()
	return snapshot{
		inProgress:   c.inProgress,
		timedOut:     c.timedOut,
		lastActivity: c.lastActivity,
		turns:        slices.Clip(c.turns),
		numSilences:  c.numSilences,
		numOOD:       c.numOOD,
		handoff:      c.handoff,
		metrics:      c.metrics,
		state:        c.state,
	}
}

// InProgress reports whether the conversation may still change.
func (c *Conversation) InProgress() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.inProgress
}

// TimedOut reports whether the conversation ended by idling out.
func (c *Conversation) TimedOut() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.timedOut
}

// less orders conversations by start time, then id, so ties are stable.
func (c *Conversation) less(d *Conversation) bool {
	if !c.StartedAt.Equal(d.StartedAt) {
		return c.StartedAt.Before(d.StartedAt)
	}
	return c.ID < d.ID
}

// StoreHooks observe a store's conversations, for the alert evaluator and
// webhooks. Each is optional and runs after the change, outside the store's
// and the conversation's locks, on the goroutine that made the change, so
// it must be quick and must not block.
type StoreHooks struct {
	// Added follows Store.Add of a new conversation.
	Added func(c *Conversation)
	// Turn follows AppendTurn on a stored conversation.
	Turn func(c *Conversation, t Turn)
	// Handoff follows AppendTurn with a TurnUpdate.Handoff.
	Handoff func(c *Conversation, h *HandoffRecord)
	// Ended follows the first Store.End of a conversation.
	Ended func(c *Conversation, at time.Time, timedOut bool)
}

// Store keeps conversations, bounded by a cap. It is safe for concurrent use.
type Store struct {
	hooks     atomic.Pointer[StoreHooks]
	mu        sync.RWMutex
	cap       int
	byID      map[string]*Conversation
	byProject map[string][]*Conversation // sorted by less, ascending
	shared    map[string]*Conversation   // project + "\x00" + shared_id
	ended     endedHeap
}

// NewStore returns an empty store keeping at most cap conversations.
func NewStore(cap int) *Store {
	return &Store{
		cap:       cap,
		byID:      make(map[string]*Conversation),
		byProject: make(map[string][]*Conversation),
		shared:    make(map[string]*Conversation),
	}
}

// SetHooks installs the observers; nil removes them.
func (s *Store) SetHooks(h *StoreHooks) { s.hooks.Store(h) }

// Add stores a new in-progress conversation, evicting the oldest ended ones
// when the store is full. It reports false when the id is taken. When every
// stored conversation is still in progress the cap is exceeded rather than
// cutting a live session; the idle janitor ends those in time.
func (s *Store) Add(c *Conversation) bool {
	if !s.add(c) {
		return false
	}
	if h := s.hooks.Load(); h != nil && h.Added != nil {
		h.Added(c)
	}
	return true
}

func (s *Store) add(c *Conversation) bool {
	c.mu.Lock()
	c.inProgress = true
	if c.lastActivity.IsZero() {
		c.lastActivity = c.StartedAt
	}
	c.mu.Unlock()

	s.mu.Lock()
	defer s.mu.Unlock()
	if _, dup := s.byID[c.ID]; dup {
		return false
	}
	c.mu.Lock()
	c.store = s
	c.mu.Unlock()
	for len(s.byID) >= s.cap && s.ended.Len() > 0 {
		s.removeLocked(heap.Pop(&s.ended).(*Conversation))
	}
	s.byID[c.ID] = c
	list := s.byProject[c.ProjectID]
	i := sort.Search(len(list), func(i int) bool { return c.less(list[i]) })
	list = append(list, nil)
	copy(list[i+1:], list[i:])
	list[i] = c
	s.byProject[c.ProjectID] = list
	return true
}

func (s *Store) removeLocked(c *Conversation) {
	delete(s.byID, c.ID)
	list := s.byProject[c.ProjectID]
	i := sort.Search(len(list), func(i int) bool { return !list[i].less(c) })
	if i < len(list) && list[i] == c {
		list = append(list[:i], list[i+1:]...)
		list[len(list):cap(list)][0] = nil // drop the stale pointer so it can be collected
		s.byProject[c.ProjectID] = list
	}
	if h := c.handoffSnapshot(); h != nil && h.SharedID != "" {
		key := c.ProjectID + "\x00" + h.SharedID
		if s.shared[key] == c {
			delete(s.shared, key)
		}
	}
}

func (c *Conversation) handoffSnapshot() *HandoffRecord {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.handoff
}

// End marks a conversation finished and makes it evictable. Ending twice
// is a no-op.
func (s *Store) End(c *Conversation, at time.Time, timedOut bool) {
	c.mu.Lock()
	if c.ended {
		c.mu.Unlock()
		return
	}
	c.ended = true
	c.inProgress = false
	c.timedOut = timedOut
	if at.After(c.lastActivity) {
		c.lastActivity = at
	}
	c.mu.Unlock()

	s.mu.Lock()
	if s.byID[c.ID] == c {
		heap.Push(&s.ended, c)
	}
	s.mu.Unlock()
	if h := s.hooks.Load(); h != nil && h.Ended != nil {
		h.Ended(c, at, timedOut)
	}
}

// IndexSharedID makes a conversation findable by the shared_id its agent
// stored at handoff.
func (s *Store) IndexSharedID(c *Conversation, sharedID string) {
	if sharedID == "" {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.byID[c.ID] == c {
		s.shared[c.ProjectID+"\x00"+sharedID] = c
	}
}

// Get returns a conversation by id.
func (s *Store) Get(id string) (*Conversation, bool) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	c, ok := s.byID[id]
	return c, ok
}

// BySharedID returns the conversation of a project whose handoff stored
// sharedID (the latest one when several did).
func (s *Store) BySharedID(projectID, sharedID string) (*Conversation, bool) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	c, ok := s.shared[projectID+"\x00"+sharedID]
	return c, ok
}

// Len is the number of stored conversations.
func (s *Store) Len() int {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return len(s.byID)
}

// Select returns the conversations of a project accepted by keep, in
// ascending (started_at, id) order. keep sees only immutable fields and
// runs under the store's read lock, so it must not call back into the store.
func (s *Store) Select(projectID string, keep func(*Conversation) bool) []*Conversation {
	s.mu.RLock()
	defer s.mu.RUnlock()
	var out []*Conversation
	for _, c := range s.byProject[projectID] {
		if keep(c) {
			out = append(out, c)
		}
	}
	return out
}

// endedHeap orders ended conversations oldest first for eviction.
type endedHeap []*Conversation

func (h endedHeap) Len() int           { return len(h) }
func (h endedHeap) Less(i, j int) bool { return h[i].less(h[j]) }
func (h endedHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *endedHeap) Push(x any)        { *h = append(*h, x.(*Conversation)) }
func (h *endedHeap) Pop() any {
	old := *h
	n := len(old)
	c := old[n-1]
	old[n-1] = nil
	*h = old[:n-1]
	return c
}
