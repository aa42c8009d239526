// A text filter typed into an input and committed to the URL after a pause. The URL wins when it
// changes from elsewhere (a nav link without filters), but never undoes keystrokes in flight.
import { useDebouncedValue } from '@mantine/hooks';
import { useEffect, useRef, useState } from 'react';

export function useUrlText(
  urlValue: string | undefined,
  commit: (value: string | undefined) => void,
): [string, (value: string) => void] {
  const [text, setText] = useState(urlValue ?? '');
  const [debounced] = useDebouncedValue(text, 300);
  const pushed = useRef(urlValue ?? '');
  const commitRef = useRef(commit);
  commitRef.current = commit;

  useEffect(() => {
    const v = urlValue ?? '';
    if (v !== pushed.current) {
      pushed.current = v;
      setText(v);
    }
  }, [urlValue]);

  useEffect(() => {
    const v = debounced.trim();
    if (v !== pushed.current) {
      pushed.current = v;
      commitRef.current(v || undefined);
    }
  }, [debounced]);

  return [text, setText];
}
