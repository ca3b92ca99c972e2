// What the app offers on a copy follows the operation tiers: capture needs read_write, edit full.
import { describe, expect, it } from 'vitest'
import { writeAccess } from '../../src/app/write-access'

describe('write access', () => {
  it('offers capture and edit to full, capture alone to read_write, neither to read, each refusal with its reason', () => {
    expect(writeAccess('full', false)).toEqual({ tier: 'full', capture: '', edit: '', pair: '' })
    const rw = writeAccess('read_write', false)
    expect(rw.capture).toBe('')
    expect(rw.edit).toMatch(/connection to the memory is read_write, and this needs full/)
    const read = writeAccess('read', false)
    expect(read.capture).toMatch(/is read, and this needs read_write/)
    expect(read.edit).toMatch(/is read, and this needs full/)
    // pairing hands a new device the owner's access: only a full connection offers it
    expect(rw.pair).toMatch(/is read_write, and this needs full/)
  })

  it("says an organization member's copy is the owner's to change", () => {
    const member = writeAccess('read', true)
    expect(member.capture).toContain('member of its organization')
    expect(member.edit).toBe(member.capture)
    expect(member.pair).toBe(member.capture)
  })
})
