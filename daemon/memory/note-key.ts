// "The same sentence" for notes (issue 9 item 15): case, Unicode form, spacing and the closing
// punctuation do not make a different note. The key is a hash of that normal form, indexed, so
// remembering a sentence again finds the earlier note in one lookup.
import { createHash } from 'node:crypto';

export const normaliseNoteText = (text: string): string =>
  text
    .normalize('NFKC')
    .toLowerCase()
    .replace(/\s+/g, ' ')
    .trim()
    .replace(/[\s.!?\u3002\uff01\uff1f]+$/u, '');

export const noteKey = (text: string): string => createHash('sha256').update(normaliseNoteText(text)).digest('hex').slice(0, 32);
