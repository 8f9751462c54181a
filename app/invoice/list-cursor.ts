// The list's cursor: the last row's id, opaque to clients (base64url of "i:<id>"). Pure.

export function encodeCursor(rowId: string): string {
  return Buffer.from(`i:${rowId}`, 'utf8').toString('base64url');
}

/** The row id a cursor names, or null when it is not one encodeCursor made. */
export function decodeCursor(cursor: string): string | null {
  if (!/^[A-Za-z0-9_-]{1,40}$/.test(cursor)) return null;
  const m = /^i:([1-9][0-9]{0,17})$/.exec(Buffer.from(cursor, 'base64url').toString('utf8'));
  return m ? m[1] : null;
}
