create table if not exists stock (sku varchar(32) primary key, qty int not null, fence bigint not null default 0);
create table if not exists sale (id bigserial primary key, sku varchar(32) not null, token bigint not null);
