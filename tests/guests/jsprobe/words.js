// A module of the guest imported by relative path: its lines show in error places as words.js:LINE:COL.
export function words(text) {
  return text.trim().split(/\s+/).filter((word) => word.length > 0);
}
