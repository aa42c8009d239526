// After client-side navigation, announce the new page to screen readers and move focus to its
// heading (as a full page load would), so keyboard users start at the new content.
import { VisuallyHidden } from '@mantine/core';
import { useRouterState } from '@tanstack/react-router';
import { useEffect, useRef, useState } from 'react';

export function RouteAnnouncer() {
  const pathname = useRouterState({ select: (s) => s.location.pathname });
  const status = useRouterState({ select: (s) => s.status });
  const [message, setMessage] = useState('');
  const first = useRef(true);

  useEffect(() => {
    if (status !== 'idle') return;
    if (first.current) {
      first.current = false;
      return;
    }
    const timer = window.setTimeout(() => {
      setMessage(document.title);
      const heading = document.querySelector<HTMLElement>('[data-page-heading]');
      const active = document.activeElement;
      // Keep focus where it is when the user is typing in a form on the new page.
      if (heading && (!active || active === document.body || active.closest('nav, header, [role="menu"]')))
        heading.focus();
    }, 50);
    return () => window.clearTimeout(timer);
  }, [pathname, status]);

  return (
    <VisuallyHidden role="status" aria-live="polite" aria-atomic="true">
      {message}
    </VisuallyHidden>
  );
}
