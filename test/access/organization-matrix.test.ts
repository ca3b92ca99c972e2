// The organization matrix (organization-matrix.ts) on one sync server that keeps its
// organizations in its data directory (orgs.json).
import { startHarness } from '../server/harness'
import { organizationMatrix } from './organization-matrix'

organizationMatrix(async () => {
  const h = await startHarness()
  const orgs = () => h.server.organizations
  return {
    ownerUrl: h.server.url,
    replicaUrl: h.server.url,
    memberUrl: h.server.url,
    orgs: {
      create: (name) => orgs().create(name),
      addMember: (orgId, input) => orgs().addMember(orgId, input),
      removeMember: (orgId, memberId) => orgs().removeMember(orgId, memberId),
      list: () => orgs().list(),
      accept: (orgId, memoryId) => orgs().accept(orgId, memoryId),
      unlist: (orgId, memoryId) => orgs().unlist(orgId, memoryId),
      memories: (orgId) => orgs().memories(orgId),
    },
    token: async (memoryId, tier, agent) => h.token(memoryId, tier, agent),
    client: (memoryId, token) => h.client(memoryId, token),
    roomState: (memoryId) => h.server.roomState(memoryId),
    restart: () => h.restart(),
    cleanup: () => h.cleanup(),
  }
})
