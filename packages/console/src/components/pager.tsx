/** Previous / next pages for page-numbered lists (users, a user's measurements). */
export function Pager(props: { page: number; perPage: number; total: number; onPage: (p: number) => void }) {
  const pages = Math.max(1, Math.ceil(props.total / props.perPage));
  if (pages <= 1) return null;
  return (
    <nav class="pager" aria-label="Pages">
      <button
        type="button"
        class="btn btn-small"
        disabled={props.page <= 1}
        onClick={() => props.onPage(props.page - 1)}
      >
        Previous
      </button>
      <span class="muted small">{`Page ${props.page} of ${pages} · ${props.total} in all`}</span>
      <button
        type="button"
        class="btn btn-small"
        disabled={props.page >= pages}
        onClick={() => props.onPage(props.page + 1)}
      >
        Next
      </button>
    </nav>
  );
}
