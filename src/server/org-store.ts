// The seam between the sync server and wherever its organizations are kept: the registry (with
// the listing's consent) and the index of memories visible to each organization, either in the
// data directory (one server: orgs.json and org-memories.json) or in a Redis every server shares.
import type { SharedVisibility } from '../sync/visibility'
import type { OrgMemories, OrgMemory } from './org-memories'
import type { ListedMemory, MemberOf, NewMember, NewMemberInput, Organization, OrgMember, OrgRegistry } from './org-registry'

/** The organization operations, whichever store keeps them (asynchronous: the store may be shared). */
export interface OrgDirectory {
  create(name: string): Promise<Organization>
  addMember(orgId: string, input: NewMemberInput): Promise<NewMember>
  /** Removes a member for good; every server holding its sockets closes them. */
  removeMember(orgId: string, memberId: string): Promise<OrgMember>
  list(): Promise<Organization[]>
  /** Accepts a memory into the organization's listing; `by`: the publishing member. */
  accept(orgId: string, memoryId: string, by?: string): Promise<ListedMemory>
  /** Takes a memory out of the listing: members' sockets to it close, on every server. */
  unlist(orgId: string, memoryId: string): Promise<void>
}

/** What the sync server asks of its organizations. */
export interface OrgSource extends OrgDirectory {
  /**
   * The member a credential belongs to (a removed one included, so callers can say why), as
   * the store holds it now: an unknown credential may be a member another process just added.
   */
  lookup(credential: string): Promise<MemberOf | null>
  /** Brings what this server knows up to date where that is cheap (the file: one stat); before synchronous checks. */
  catchUp(): void
  /** Whether the member is still in the organization, from what this server knows now. */
  isActive(orgId: string, memberId: string): boolean
  /** Whether the organization accepted the memory into its listing, from what this server knows now. */
  accepts(orgId: string, memoryId: string): boolean
  /** Called on this server for every member removed, wherever it was removed. */
  onMemberRemoved(listener: (org: Organization, member: OrgMember) => void): () => void
  /** Called on this server for every memory taken out of a listing, wherever it was. */
  onUnlisted(listener: (orgId: string, memoryId: string) => void): () => void
  close(): Promise<void>
}

/** Which memories are visible to which organization (the room documents are the truth; this follows them). */
export interface OrgMemoryIndex {
  /** Records a room's visibility as its document now holds it (null: private); `by`: who changed it, when a socket did. */
  note(room: string, visibility: SharedVisibility | null, by?: string): void
  /** The rooms visible to an organization, by name. */
  of(orgId: string): Promise<OrgMemory[]>
  /**
   * Whether the index shows the room to the organization now; only an index shared by several
   * servers has it: a room this server read from storage a moment ago may be behind a change
   * made through another server, the shared index is not.
   */
  shows?(room: string, orgId: string): Promise<boolean>
}

/** The data directory's registry (orgs.json) behind the seam; its admin calls stay synchronous underneath. */
export function fileOrgSource(registry: OrgRegistry): OrgSource {
  return {
    create: async (name) => registry.create(name),
    addMember: async (orgId, input) => registry.addMember(orgId, input),
    removeMember: async (orgId, memberId) => registry.removeMember(orgId, memberId),
    list: async () => registry.list(),
    accept: async (orgId, memoryId, by) => registry.accept(orgId, memoryId, by),
    unlist: async (orgId, memoryId) => registry.unlist(orgId, memoryId),
    lookup: async (credential) => {
      const found = registry.verify(credential)
      if (found) return found
      // a member added a moment ago by another process: read the registry again once
      registry.reloadIfChanged()
      return registry.verify(credential)
    },
    catchUp: () => registry.reloadIfChanged(),
    isActive: (orgId, memberId) => registry.isActive(orgId, memberId),
    accepts: (orgId, memoryId) => registry.accepts(orgId, memoryId),
    onMemberRemoved: (listener) => registry.onMemberRemoved(listener),
    onUnlisted: (listener) => registry.onUnlisted(listener),
    close: async () => {},
  }
}

/** The data directory's index (org-memories.json) behind the seam. */
export function fileOrgMemoryIndex(index: OrgMemories): OrgMemoryIndex {
  return {
    note: (room, visibility, by) => index.note(room, visibility, by),
    of: async (orgId) => index.of(orgId),
  }
}
