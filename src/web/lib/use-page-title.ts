import { useEffect } from 'react';

/** Sets the document title ("<title> · Rampart") while the calling page is mounted. */
export function usePageTitle(title: string | null | undefined): void {
  useEffect(() => {
    document.title = title ? `${title} · Rampart` : 'Rampart';
  }, [title]);
}
