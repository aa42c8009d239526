// A small form-state hook (values, per-field errors, submit with client-side validation).
import { useCallback, useRef, useState, type ChangeEvent, type FormEvent } from 'react';

export type FormErrors<V> = Partial<Record<keyof V & string, string | null>>;

/** What a text input or native select needs to show and edit one field: spread it onto the input. */
export interface FieldProps<T> {
  value: T;
  error: string | null | undefined;
  onChange: (event: ChangeEvent<HTMLInputElement | HTMLSelectElement>) => void;
}

export interface FormState<V extends Record<string, unknown>> {
  values: V;
  errors: FormErrors<V>;
  setValue: <K extends keyof V & string>(key: K, value: V[K]) => void;
  setValues: (values: V) => void;
  setErrors: (errors: FormErrors<V>) => void;
  reset: (values?: V) => void;
  formRef: React.RefObject<HTMLFormElement | null>;
  onSubmit: (handler: (values: V) => void | Promise<void>) => (event: FormEvent<HTMLFormElement>) => void;
  /** Value, error and change handler of a text-valued field, e.g. `<TextInput {...form.field('email')} />`. */
  field: <K extends keyof V & string>(key: K) => FieldProps<V[K]>;
}

function clean<V>(errors: FormErrors<V>): FormErrors<V> {
  const out: FormErrors<V> = {};
  for (const [k, v] of Object.entries(errors) as [keyof V & string, string | null | undefined][]) if (v) out[k] = v;
  return out;
}

export function useForm<V extends Record<string, unknown>>(
  initial: V,
  validate?: (values: V) => FormErrors<V>,
): FormState<V> {
  const [values, setAll] = useState<V>(initial);
  const [errors, setErrorsState] = useState<FormErrors<V>>({});
  const formRef = useRef<HTMLFormElement | null>(null);
  const initialRef = useRef(initial);

  const setValue = useCallback(<K extends keyof V & string>(key: K, value: V[K]) => {
    setAll((prev) => ({ ...prev, [key]: value }));
    setErrorsState((prev) => (prev[key] ? { ...prev, [key]: null } : prev));
  }, []);

  const focusFirstInvalid = () => {
    window.setTimeout(() => formRef.current?.querySelector<HTMLElement>('[aria-invalid="true"]')?.focus(), 0);
  };

  const setErrors = useCallback((next: FormErrors<V>) => {
    const cleaned = clean(next);
    setErrorsState(cleaned);
    if (Object.keys(cleaned).length > 0) focusFirstInvalid();
  }, []);

  const onSubmit = (handler: (values: V) => void | Promise<void>) => (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault();
    const found = clean(validate ? validate(values) : {});
    setErrorsState(found);
    if (Object.keys(found).length > 0) {
      focusFirstInvalid();
      return;
    }
    void handler(values);
  };

  const reset = useCallback((next?: V) => {
    setAll(next ?? initialRef.current);
    setErrorsState({});
  }, []);

  const field = <K extends keyof V & string>(key: K): FieldProps<V[K]> => ({
    value: values[key],
    error: errors[key],
    onChange: (event) => setValue(key, event.currentTarget.value as V[K]),
  });

  return { values, errors, setValue, setValues: setAll, setErrors, reset, formRef, onSubmit, field };
}
