/**
 * An immutable list whose append does not copy: appends share one growing buffer as long as each
 * list is appended to at most once (the common, linear case). Appending to an older version copies
 * its prefix first, so every version stays what it was.
 */
export class AppendOnlyList<T> implements Iterable<T> {
  private frozen: readonly T[] | undefined;

  private constructor(
    private readonly buffer: T[],
    readonly size: number,
  ) {}

  static empty<T>(): AppendOnlyList<T> {
    return new AppendOnlyList<T>([], 0);
  }

  static of<T>(items: readonly T[]): AppendOnlyList<T> {
    return new AppendOnlyList<T>([...items], items.length);
  }

  append(...items: T[]): AppendOnlyList<T> {
    if (items.length === 0) return this;
    const buffer = this.buffer.length === this.size ? this.buffer : this.buffer.slice(0, this.size);
    buffer.push(...items);
    return new AppendOnlyList(buffer, this.size + items.length);
  }

  /** The first `size` items, sharing this list's buffer. */
  prefix(size: number): AppendOnlyList<T> {
    if (size >= this.size) return this;
    return new AppendOnlyList(this.buffer, Math.max(0, size));
  }

  /** True when this list is the first `this.size` items of `other` without a copy between them. */
  isPrefixOf(other: AppendOnlyList<T>): boolean {
    return this.buffer === other.buffer && this.size <= other.size;
  }

  at(index: number): T | undefined {
    const i = index < 0 ? this.size + index : index;
    return i >= 0 && i < this.size ? this.buffer[i] : undefined;
  }

  last(): T | undefined {
    return this.size === 0 ? undefined : this.buffer[this.size - 1];
  }

  /**
   * Folds the items into a value with `add`, reusing earlier work: `memo` keeps, per shared buffer,
   * the value for the longest prefix folded so far, so a list that extends one already folded (as
   * each step's conversation extends the last step's) folds only its new items. A different `key`
   * (the fold's parameters) starts over. Values must be immutable: earlier results stay valid.
   */
  foldShared<K, V>(
    memo: WeakMap<object, SharedFold<K, V>>,
    key: K,
    start: () => V,
    add: (value: V, item: T, index: number) => V,
  ): V {
    let fold = memo.get(this.buffer);
    if (!fold || fold.key !== key || fold.size > this.size) {
      fold = { key, size: 0, value: start() };
      memo.set(this.buffer, fold);
    }
    for (let i = fold.size; i < this.size; i++) fold.value = add(fold.value, this.buffer[i] as T, i);
    fold.size = this.size;
    return fold.value;
  }

  /** A frozen array of the items; built once per list and cached. */
  toArray(): readonly T[] {
    if (this.frozen === undefined) this.frozen = Object.freeze(this.buffer.slice(0, this.size));
    return this.frozen;
  }

  *[Symbol.iterator](): Iterator<T> {
    for (let i = 0; i < this.size; i++) yield this.buffer[i] as T;
  }
}

/** What `foldShared` keeps per buffer: the fold's key, how many items it has folded, and the value. */
export interface SharedFold<K, V> {
  key: K;
  size: number;
  value: V;
}
