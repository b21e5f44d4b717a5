import type { Role } from './roles';

/** Who is acting: what services, audit events and pages need to know of a user. */
export interface Actor {
  id: string;
  login: string;
  name: string;
  role: Role;
}
