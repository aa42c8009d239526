// Layout of /settings/staff/*: renders nothing of the staff area unless /me says staff.
// The server checks again on every call (403 staff_only), and pages show that message if it does.
import { Outlet } from '@tanstack/react-router';
import { ForbiddenPage } from '../../components/StatusPages.tsx';
import { useMe } from '../../lib/me.ts';

export function StaffGuard() {
  const me = useMe();
  if (!me.staff) return <ForbiddenPage />;
  return <Outlet />;
}

export function SuperAdminGuard({
  children,
  message = 'Only Rampart super-admins can see and change platform roles.',
}: {
  children: React.ReactNode;
  message?: string;
}) {
  const me = useMe();
  if (!me.superAdmin) return <ForbiddenPage title="Super-admins only" message={message} />;
  return <>{children}</>;
}
