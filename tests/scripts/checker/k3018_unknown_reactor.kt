external agent send_mail(to: string) -> null from "smtp"

agent main() -> integer { 1 }
